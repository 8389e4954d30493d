#include "collectives/mpi/communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "collectives/mpi/world.h"
#include "common/config.h"

#if RIGEL_HAVE_MPI
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace rigel::collectives::mpi_backend {

#if RIGEL_HAVE_MPI
namespace {

// MPI counts are ints: larger buffers go in pieces of this many floats.
constexpr size_t kMaxPiece = size_t{1} << 30;

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "mpi"; }
  Memory memory() const override { return Memory::kHost; }

  Status AllReduce(float* data, size_t count, ReduceOp op) override {
    RIGEL_RETURN_IF_ERROR(failed_);
    for (size_t done = 0; done < count; done += kMaxPiece) {
      RIGEL_RETURN_IF_ERROR(Ring(data + done, std::min(count - done, kMaxPiece), op));
    }
    return Status::Ok();
  }

  Status Broadcast(float* data, size_t count, int root) override {
    RIGEL_RETURN_IF_ERROR(failed_);
    if (root < 0 || root >= size_) {
      return InvalidArgument(fmt::format("mpi: broadcast root {} outside 0..{}", root, size_ - 1));
    }
    for (size_t done = 0; done < count; done += kMaxPiece) {
      const int len = static_cast<int>(std::min(count - done, kMaxPiece));
      RIGEL_RETURN_IF_ERROR(
          Check("MPI_Bcast", MPI_Bcast(data + done, len, MPI_FLOAT, root, comm_)));
    }
    return Status::Ok();
  }

  Status AllGather(const float* in, size_t count, float* out) override {
    RIGEL_RETURN_IF_ERROR(failed_);
    if (count > static_cast<size_t>(INT_MAX)) {
      return InvalidArgument("mpi: all-gather of more than 2^31 floats per rank");
    }
    return Check("MPI_Allgather", MPI_Allgather(in, static_cast<int>(count), MPI_FLOAT, out,
                                                static_cast<int>(count), MPI_FLOAT, comm_));
  }

  Status Barrier() override {
    RIGEL_RETURN_IF_ERROR(failed_);
    return Check("MPI_Barrier", MPI_Barrier(comm_));
  }

 private:
  // A ring all-reduce over MPI_Sendrecv, as Gloo's and NCCL's: in the
  // reduce-scatter half, chunk k is summed once, along the ring, ending at
  // rank k - 1; the all-gather half copies it to the others. Every rank gets
  // the same bits by construction. (OpenMPI's MPI_Reduce_scatter_block, the
  // obvious way to get that, ran at a tenth of MPI_Allreduce's speed here.)
  Status Ring(float* data, size_t count, ReduceOp op) {
    const int n = size_;
    if (n == 1 || count == 0) {
      return Status::Ok();
    }
    auto begin = [&](int k) { return count * static_cast<size_t>(k) / static_cast<size_t>(n); };
    auto len = [&](int k) { return begin(k + 1) - begin(k); };
    const int next = (rank_ + 1) % n, prev = (rank_ + n - 1) % n;
    tmp_.resize(len(0) + 1);
    for (int s = 0; s < n - 1; ++s) {
      const int send = ((rank_ - s) % n + n) % n, recv = ((rank_ - s - 1) % n + n) % n;
      tmp_.resize(std::max(tmp_.size(), len(recv)));
      RIGEL_RETURN_IF_ERROR(Check(
          "MPI_Sendrecv", MPI_Sendrecv(data + begin(send), static_cast<int>(len(send)), MPI_FLOAT,
                                       next, kTag, tmp_.data(), static_cast<int>(len(recv)),
                                       MPI_FLOAT, prev, kTag, comm_, MPI_STATUS_IGNORE)));
      float* mine = data + begin(recv);
      for (size_t i = 0; i < len(recv); ++i) mine[i] += tmp_[i];
    }
    const int owned = (rank_ + 1) % n;
    if (op == ReduceOp::kMean) {
      float* mine = data + begin(owned);
      for (size_t i = 0; i < len(owned); ++i) mine[i] /= static_cast<float>(n);
    }
    for (int s = 0; s < n - 1; ++s) {
      const int send = ((rank_ + 1 - s) % n + n) % n, recv = ((rank_ - s) % n + n) % n;
      RIGEL_RETURN_IF_ERROR(Check(
          "MPI_Sendrecv", MPI_Sendrecv(data + begin(send), static_cast<int>(len(send)), MPI_FLOAT,
                                       next, kTag, data + begin(recv), static_cast<int>(len(recv)),
                                       MPI_FLOAT, prev, kTag, comm_, MPI_STATUS_IGNORE)));
    }
    return Status::Ok();
  }

  // A failed call fails every later one (the Communicator contract).
  Status Check(const char* what, int rc) {
    if (rc == MPI_SUCCESS) return Status::Ok();
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    failed_ = Unavailable(fmt::format("mpi: {} failed on rank {} of {}: {}", what, rank_, size_,
                                      std::string(text, static_cast<size_t>(len))));
    return failed_;
  }

  MPI_Comm comm_;
  int rank_, size_;
  Status failed_;
  static constexpr int kTag = 7401;
  std::vector<float> tmp_;
};

}  // namespace
#endif

StatusOr<std::unique_ptr<Communicator>> NewMpiCommunicator(Store* /*store*/,
                                                           const CommunicatorOptions& o) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size) {
    return InvalidArgument(fmt::format("mpi: rank {} of size {}", o.rank, o.size));
  }
  RIGEL_RETURN_IF_ERROR(Join(/*participate=*/true, o.rank));
#if RIGEL_HAVE_MPI
  MPI_Comm comm = *static_cast<MPI_Comm*>(WorkersComm());
  int rank = -1, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank != o.rank || size != o.size) {
    return FailedPrecondition(fmt::format(
        "mpi: this worker is rank {} of {} among the MPI job's workers, but rank {} of {} in "
        "the cluster: start every process of the job with the same mpirun",
        rank, size, o.rank, o.size));
  }
  return std::unique_ptr<Communicator>(new MpiCommunicator(comm, rank, size));
#else
  return Internal("unreachable: Join succeeded without MPI");
#endif
}

}  // namespace rigel::collectives::mpi_backend
