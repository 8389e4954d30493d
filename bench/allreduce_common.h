// What bench/allreduce.cc (Rigel's Communicator) and bench/allreduce_mpi.cc
// (the MPI_Allreduce reference) share, so both sides check their sums the same
// way: the known inputs every rank reduces once per size before timing, and
// the check of the result. Header-only, no dependencies beyond the standard
// library (the reference binary links MPI only).
#ifndef RIGEL_BENCH_ALLREDUCE_COMMON_H_
#define RIGEL_BENCH_ALLREDUCE_COMMON_H_

#include <cstddef>
#include <cstdio>
#include <string>

namespace rigel::bench::allreduce {

// Rank `rank`'s input at element `i`: a small integer (1..1000), so the sum
// over any number of ranks below 16000 is exact in float.
inline float Input(int rank, size_t i) {
  return static_cast<float>((i * 7 + static_cast<size_t>(rank) * 13) % 1000 + 1);
}

inline void FillInput(float* data, size_t count, int rank) {
  for (size_t i = 0; i < count; ++i) data[i] = Input(rank, i);
}

// Returns "" when data[i] is the sum over `ranks` ranks of Input(r, i) for
// every i, else a description of the first wrong element.
inline std::string CheckSum(const float* data, size_t count, int ranks) {
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int r = 0; r < ranks; ++r) want += Input(r, i);
    if (data[i] != want) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "element %zu of %zu is %.9g, want %.9g (sum over %d ranks)", i,
                    count, static_cast<double>(data[i]), static_cast<double>(want), ranks);
      return buf;
    }
  }
  return "";
}

}  // namespace rigel::bench::allreduce

#endif  // RIGEL_BENCH_ALLREDUCE_COMMON_H_
