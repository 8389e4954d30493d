#include "collectives/nccl/communicator.h"

#include <utility>

#include "collectives/device_buffer.h"
#include "collectives/devices.h"
#include "common/config.h"

#if RIGEL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "Rigel's NCCL backend needs NCCL 2.14 or later (ncclConfig_t, non-blocking communicators)"
#endif
#endif

namespace rigel::collectives::nccl_backend {

#if !RIGEL_HAVE_CUDA
namespace {
// The words `rigel run` says before any process starts (CountCudaDevices,
// collectives/devices.h).
Status NoNccl() { return CountCudaDevices().status(); }
}  // namespace

Status Available() { return NoNccl(); }
StatusOr<int> DeviceFor(const CommunicatorOptions&) { return NoNccl(); }
StatusOr<std::unique_ptr<Communicator>> NewNcclCommunicator(Store*, const CommunicatorOptions&) {
  return NoNccl();
}

#else  // RIGEL_HAVE_CUDA

namespace {

using Clock = std::chrono::steady_clock;

// "cudaSetDevice says invalid device ordinal (cudaErrorInvalidDevice)". Also
// clears the thread's last (non-sticky) CUDA error so it does not leak into
// later calls.
std::string CudaError(const char* call, cudaError_t e) {
  (void)cudaGetLastError();
  return fmt::format("{} says {} ({})", call, cudaGetErrorString(e), cudaGetErrorName(e));
}

// "ncclAllReduce says remote process exited or there was a network error
// (NCCL's last error)".
std::string NcclError(const char* call, ncclResult_t r, ncclComm_t comm) {
  std::string s = fmt::format("{} says {}", call, ncclGetErrorString(r));
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') s += fmt::format(" ({})", last);
  return s;
}

// Waits a little between polls: spins (yielding) first, so short collectives
// return quickly, then sleeps so long ones do not burn a core.
void Pause(int polls) {
  if (polls < 2000) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(int rank, int size, int device, std::chrono::milliseconds timeout)
      : rank_(rank), size_(size), device_(device), timeout_(timeout) {}

  // Flushes this rank's work (ncclCommFinalize, bounded by the timeout) and
  // frees everything; aborts instead when the communicator failed or
  // finalizing does not finish.
  ~NcclCommunicator() override {
    (void)cudaSetDevice(device_);
    if (comm_ != nullptr) {
      const ncclResult_t r = ncclCommFinalize(comm_);
      if (r != ncclSuccess && r != ncclInProgress) {
        Abort();
      } else {
        (void)Poll("finalize", Clock::now() + timeout_, /*wait_stream=*/false);
      }
      if (comm_ != nullptr) (void)ncclCommDestroy(comm_);
    }
    if (scratch_ != nullptr) (void)cudaFree(scratch_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    (void)cudaGetLastError();
  }

  // Creates the stream and scratch buffer and joins with the other ranks;
  // fails once `deadline` passes.
  Status Init(const ncclUniqueId& id, Clock::time_point deadline) {
    const char* what = "join";
    cudaError_t e = cudaSetDevice(device_);
    if (e != cudaSuccess) return Fail(what, CudaError("cudaSetDevice", e));
    e = cudaStreamCreate(&stream_);
    if (e != cudaSuccess) return Fail(what, CudaError("cudaStreamCreate", e));
    e = cudaMalloc(reinterpret_cast<void**>(&scratch_), sizeof(float));
    if (e != cudaSuccess) return Fail(what, CudaError("cudaMalloc", e));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t r = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      return Fail(what, NcclError("ncclCommInitRankConfig", r, comm_));
    }
    return Poll(what, deadline, /*wait_stream=*/false);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "nccl"; }
  Memory memory() const override { return Memory::kCuda; }

  Status AllReduce(float* data, size_t count, ReduceOp op) override {
    const char* what = op == ReduceOp::kMean ? "allreduce (mean)" : "allreduce";
    if (!failed_.ok() || count == 0) return failed_;
    RIGEL_RETURN_IF_ERROR(CheckBuffer(what, "data", data));
    const ncclRedOp_t nop = op == ReduceOp::kMean ? ncclAvg : ncclSum;
    return Run(what, "ncclAllReduce",
               [&] { return ncclAllReduce(data, data, count, ncclFloat, nop, comm_, stream_); });
  }

  Status Broadcast(float* data, size_t count, int root) override {
    if (root < 0 || root >= size_) {
      return InvalidArgument(
          fmt::format("nccl broadcast: root {} is not a rank of {}", root, size_));
    }
    if (!failed_.ok() || count == 0) return failed_;
    RIGEL_RETURN_IF_ERROR(CheckBuffer("broadcast", "data", data));
    return Run("broadcast", "ncclBroadcast",
               [&] { return ncclBroadcast(data, data, count, ncclFloat, root, comm_, stream_); });
  }

  Status AllGather(const float* in, size_t count, float* out) override {
    if (!failed_.ok() || count == 0) return failed_;
    RIGEL_RETURN_IF_ERROR(CheckBuffer("allgather", "in", in));
    RIGEL_RETURN_IF_ERROR(CheckBuffer("allgather", "out", out));
    return Run("allgather", "ncclAllGather",
               [&] { return ncclAllGather(in, out, count, ncclFloat, comm_, stream_); });
  }

  Status Barrier() override {
    // An allreduce completes on no rank before every rank has joined it.
    return Run("barrier", "ncclAllReduce", [&] {
      return ncclAllReduce(scratch_, scratch_, 1, ncclFloat, ncclSum, comm_, stream_);
    });
  }

 private:
  // Refuses pointers NCCL cannot use (plain host memory, another device's
  // memory) before they reach a kernel. Not sticky: nothing was started.
  Status CheckBuffer(const char* what, const char* name, const void* p) const {
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
      return InvalidArgument(fmt::format("nccl {} on rank {}: {} is not a CUDA pointer: {}", what,
                                         rank_, name, CudaError("cudaPointerGetAttributes", e)));
    }
    if (a.type == cudaMemoryTypeUnregistered) {
      return InvalidArgument(fmt::format(
          "nccl {} on rank {}: {} is host memory; this communicator's buffers live on CUDA "
          "device {} (see collectives::DeviceBuffer)",
          what, rank_, name, device_));
    }
    if (a.type == cudaMemoryTypeDevice && a.device != device_) {
      return InvalidArgument(
          fmt::format("nccl {} on rank {}: {} is on CUDA device {}, not this communicator's {}",
                      what, rank_, name, a.device, device_));
    }
    return Status::Ok();
  }

  // Starts one NCCL call (`launch`, named `call` in errors) on the stream and
  // waits, up to the timeout, until it has finished.
  template <typename F>
  Status Run(const char* what, const char* call, F launch) {
    if (!failed_.ok()) return failed_;
    const cudaError_t e = cudaSetDevice(device_);
    if (e != cudaSuccess) return Fail(what, CudaError("cudaSetDevice", e));
    const Clock::time_point deadline = Clock::now() + timeout_;
    const ncclResult_t r = launch();
    if (r != ncclSuccess && r != ncclInProgress) return Fail(what, NcclError(call, r, comm_));
    return Poll(what, deadline, /*wait_stream=*/true);
  }

  // Polls until the communicator has no NCCL call in progress (a
  // non-blocking communicator returns from calls early) and, with
  // `wait_stream`, the stream is idle. Fails on an NCCL or CUDA error or when
  // `deadline` passes.
  Status Poll(const char* what, Clock::time_point deadline, bool wait_stream) {
    for (int polls = 0;; ++polls) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
      if (r != ncclSuccess) return Fail(what, NcclError("ncclCommGetAsyncError", r, comm_));
      if (state != ncclSuccess && state != ncclInProgress) {
        return Fail(what, NcclError("NCCL", state, comm_));
      }
      if (state == ncclSuccess) {
        if (!wait_stream) return Status::Ok();
        const cudaError_t q = cudaStreamQuery(stream_);
        if (q == cudaSuccess) return Status::Ok();
        if (q != cudaErrorNotReady) return Fail(what, CudaError("cudaStreamQuery", q));
      }
      if (Clock::now() >= deadline) {
        return Fail(what, fmt::format("did not finish within {} ms: a rank is dead, late, or not "
                                      "calling it; the communicator was aborted",
                                      timeout_.count()));
      }
      Pause(polls);
    }
  }

  // Makes the communicator fail from now on with `detail`, and aborts it so
  // nothing is left running on the device or waiting for peers.
  Status Fail(const char* what, const std::string& detail) {
    failed_ = Unavailable(fmt::format("nccl {} failed on rank {} of {} (CUDA device {}): {}", what,
                                      rank_, size_, device_, detail));
    Abort();
    return failed_;
  }

  void Abort() {
    if (comm_ == nullptr) return;
    (void)ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  const int rank_;
  const int size_;
  const int device_;
  const std::chrono::milliseconds timeout_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  float* scratch_ = nullptr;  // one float, for Barrier
  Status failed_;
};

}  // namespace

Status Available() {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess) return Unavailable("no CUDA device: " + CudaError("cudaGetDeviceCount", e));
  if (devices == 0) return Unavailable("no CUDA device: cudaGetDeviceCount found none");
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess || version < NCCL_VERSION(2, 14, 0)) {
    return Unavailable(fmt::format(
        "the NCCL library loaded (version code {}) is older than 2.14, which Rigel needs for "
        "non-blocking communicators",
        version));
  }
  return Status::Ok();
}

StatusOr<int> DeviceFor(const CommunicatorOptions& o) {
  RIGEL_RETURN_IF_ERROR(Available());
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess) {
    return Unavailable("nccl: " + CudaError("cudaGetDeviceCount", e));
  }
  return o.device == -1 ? o.rank % devices : o.device;
}

StatusOr<std::unique_ptr<Communicator>> NewNcclCommunicator(Store* store,
                                                            const CommunicatorOptions& o) {
  const Clock::time_point deadline = Clock::now() + o.timeout;
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size) {
    return InvalidArgument(fmt::format("nccl: rank {} of {} is not a rank", o.rank, o.size));
  }
  if (store == nullptr && o.size > 1) return InvalidArgument("nccl: no rendezvous store");
  if (Status s = Available(); !s.ok()) {
    return Unavailable(fmt::format("nccl backend unavailable on rank {}: {}", o.rank, s.message()));
  }
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess) {
    return Unavailable("nccl: " + CudaError("cudaGetDeviceCount", e));
  }
  const int device = o.device == -1 ? o.rank % devices : o.device;
  if (device < 0 || device >= devices) {
    return InvalidArgument(
        fmt::format("nccl: rank {} asks for CUDA device {}, but this machine has devices 0 to {}",
                    o.rank, o.device, devices - 1));
  }

  // Rank 0 makes the id; the others wait for it in the store.
  ncclUniqueId id;
  const std::string key = o.prefix + "/nccl-id";
  if (o.rank == 0) {
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
      return Unavailable("nccl: " + CudaError("cudaSetDevice", e));
    }
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) {
      return Unavailable("nccl: rank 0 could not make an id: " +
                         NcclError("ncclGetUniqueId", r, nullptr));
    }
    if (o.size > 1) {
      if (Status s = store->Set(key, std::string(id.internal, sizeof(id.internal))); !s.ok()) {
        return Status(s.code(),
                      fmt::format("nccl: rank 0 could not publish the NCCL id: {}", s.message()));
      }
    }
  } else {
    const auto left =
        std::max(std::chrono::milliseconds(0),
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    StatusOr<std::string> v = store->Get(key, left);
    if (!v.ok()) {
      return Status(v.status().code(),
                    fmt::format("nccl: rank {} of {} got no NCCL id from rank 0: {}", o.rank,
                                o.size, v.status().message()));
    }
    if (v->size() != sizeof(id.internal)) {
      return InvalidArgument(fmt::format(
          "nccl: store key '{}' holds {} bytes, not a {}-byte NCCL id (is another job or "
          "backend using prefix '{}'?)",
          key, v->size(), sizeof(id.internal), o.prefix));
    }
    std::memcpy(id.internal, v->data(), sizeof(id.internal));
  }

  auto comm = std::make_unique<NcclCommunicator>(o.rank, o.size, device, o.timeout);
  RIGEL_RETURN_IF_ERROR(comm->Init(id, deadline));
  return std::unique_ptr<Communicator>(std::move(comm));
}

#endif  // RIGEL_HAVE_CUDA

}  // namespace rigel::collectives::nccl_backend

// DeviceBuffer is declared at the folder root (collectives/device_buffer.h)
// so that the worker needs no backend header; its CUDA calls stay here,
// beside the backend's, and use the backend's helpers.
namespace rigel::collectives {

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(data_, o.data_);
  std::swap(count_, o.count_);
  std::swap(device_, o.device_);
  return *this;
}

#if !RIGEL_HAVE_CUDA

DeviceBuffer::~DeviceBuffer() = default;
StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t, int) { return nccl_backend::NoNccl(); }
Status DeviceBuffer::CopyFromHost(const float*, size_t) { return nccl_backend::NoNccl(); }
Status DeviceBuffer::CopyToHost(float*, size_t) const { return nccl_backend::NoNccl(); }

#else  // RIGEL_HAVE_CUDA

using nccl_backend::CudaError;

DeviceBuffer::~DeviceBuffer() {
  if (data_ == nullptr) return;
  (void)cudaSetDevice(device_);
  (void)cudaFree(data_);
  (void)cudaGetLastError();
}

StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t count, int device) {
  if (device < 0) return InvalidArgument(fmt::format("DeviceBuffer: bad CUDA device {}", device));
  if (count > std::numeric_limits<size_t>::max() / sizeof(float)) {
    return InvalidArgument(fmt::format("DeviceBuffer: {} floats do not fit in memory", count));
  }
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) {
    return Unavailable(fmt::format("DeviceBuffer: cannot allocate {} floats on CUDA device {}: {}",
                                   count, device, CudaError("cudaSetDevice", e)));
  }
  DeviceBuffer b;
  b.device_ = device;
  if (count > 0) {
    void* p = nullptr;
    e = cudaMalloc(&p, count * sizeof(float));
    if (e != cudaSuccess) {
      return Unavailable(
          fmt::format("DeviceBuffer: cannot allocate {} floats on CUDA device {}: {}", count,
                      device, CudaError("cudaMalloc", e)));
    }
    b.data_ = static_cast<float*>(p);
    b.count_ = count;
  }
  return b;
}

Status DeviceBuffer::CopyFromHost(const float* host, size_t count) {
  if (count > count_) {
    return InvalidArgument(
        fmt::format("DeviceBuffer: copying {} floats into a buffer of {}", count, count_));
  }
  if (count == 0) return Status::Ok();
  const char* call = "cudaSetDevice";
  cudaError_t e = cudaSetDevice(device_);
  if (e == cudaSuccess) {
    call = "cudaMemcpy";
    e = cudaMemcpy(data_, host, count * sizeof(float), cudaMemcpyHostToDevice);
  }
  if (e != cudaSuccess) {
    return Unavailable(fmt::format("DeviceBuffer: copying {} floats to CUDA device {}: {}", count,
                                   device_, CudaError(call, e)));
  }
  return Status::Ok();
}

Status DeviceBuffer::CopyToHost(float* host, size_t count) const {
  if (count > count_) {
    return InvalidArgument(
        fmt::format("DeviceBuffer: copying {} floats out of a buffer of {}", count, count_));
  }
  if (count == 0) return Status::Ok();
  const char* call = "cudaSetDevice";
  cudaError_t e = cudaSetDevice(device_);
  if (e == cudaSuccess) {
    call = "cudaMemcpy";
    e = cudaMemcpy(host, data_, count * sizeof(float), cudaMemcpyDeviceToHost);
  }
  if (e != cudaSuccess) {
    return Unavailable(fmt::format("DeviceBuffer: copying {} floats from CUDA device {}: {}", count,
                                   device_, CudaError(call, e)));
  }
  return Status::Ok();
}

#endif  // RIGEL_HAVE_CUDA

}  // namespace rigel::collectives
