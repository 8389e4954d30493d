// Deterministic, placement-independent randomness.
//
// Every random quantity in Rigel (initial parameter values, rand(), randint(),
// negative(), data splits, generated data) is a pure function of a seed and
// integer coordinates, computed with a SplitMix64-style finaliser over a
// combined key. No state is shared, so all functions here are thread-safe and
// give the same value on any worker that computes them.
#ifndef RIGEL_COMMON_HASH_H_
#define RIGEL_COMMON_HASH_H_

#include <cstdint>

namespace rigel {

// SplitMix64 finaliser: a bijective 64-bit mixer.
inline uint64_t Mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Hash of a seed and up to four coordinates; each coordinate is folded in
// through the mixer so (a, b) and (b, a) differ.
inline uint64_t HashCoords(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0,
                           uint64_t d = 0) {
  uint64_t h = Mix64(seed ^ 0x5851f42d4c957f2dULL);
  h = Mix64(h ^ a);
  h = Mix64(h ^ b);
  h = Mix64(h ^ c);
  return Mix64(h ^ d);
}

// Uniform double in [0, 1) from the top 53 bits of `h`.
inline double UnitDouble(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// Uniform float in [0, 1) from the top 24 bits of `h`.
inline float UnitFloat(uint64_t h) { return static_cast<float>(h >> 40) * 0x1.0p-24f; }

// Standard normal from two independent hashes (Box-Muller, first output).
double NormalFromHashes(uint64_t h1, uint64_t h2);

// A small sequential generator for code that draws many values from one
// stream (data generators). Deterministic for a given seed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix64(state_++ * 0x9e3779b97f4a7c15ULL + 1); }
  double Uniform() { return UnitDouble(Next()); }
  double Normal() { uint64_t a = Next(); return NormalFromHashes(a, Next()); }
  // Uniform integer in [0, n); n > 0.
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>(Uniform() * static_cast<double>(n)); }

 private:
  uint64_t state_;
};

}  // namespace rigel

#endif  // RIGEL_COMMON_HASH_H_
