// The CUDA side of collectives/devices.h, beside the NCCL backend that
// needs one device per rank. It links the CUDA runtime only (target
// rigel::collectives_devices), so `rigel` can count devices without NCCL.
#include "collectives/devices.h"

#include <cstdlib>

#include "common/config.h"

#if RIGEL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace rigel::collectives {

namespace {

constexpr int kMaxFakeDevices = 1024;

std::string Plural(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

#if !RIGEL_HAVE_CUDA

// The hook is ignored here: without CUDA nothing can run on a device, so
// this is the first thing to say, however many devices a test pretends.
// (The NCCL backend's stubs in communicator.cc return these same words.)
StatusOr<CudaDevices> CountCudaDevices() {
  return Unavailable(
      "this build of Rigel has no NCCL: no CUDA runtime and NCCL were found under "
      "/usr/local/cuda when it was configured (RIGEL_WITH_CUDA=AUTO); install them and "
      "reconfigure, or use the gloo backend (--device cpu)");
}

#else  // RIGEL_HAVE_CUDA

StatusOr<CudaDevices> CountCudaDevices() {
  const char* fake = std::getenv(kFakeCudaDevicesEnv);
  if (fake != nullptr && *fake != '\0') {
    // Digits only, so that "1x", " 1" or "-1" are refused rather than read
    // as something the test did not mean.
    const std::string v = fake;
    const bool digits = v.size() <= 4 && v.find_first_not_of("0123456789") == std::string::npos;
    const int n = digits ? std::atoi(v.c_str()) : -1;
    if (n < 0 || n > kMaxFakeDevices) {
      return InvalidArgument(std::string(kFakeCudaDevicesEnv) + "=" + v +
                             ": expected a whole number of CUDA devices from 0 to " +
                             std::to_string(kMaxFakeDevices) +
                             " (a test hook; unset it to count the real devices)");
    }
    return CudaDevices{n, std::string(kFakeCudaDevicesEnv) + "=" + v};
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    // cudaErrorNoDevice, cudaErrorInsufficientDriver and any other failure
    // all mean the same to a job: nothing here can run NCCL.
    (void)cudaGetLastError();
    return CudaDevices{0, std::string("cudaGetDeviceCount says ") + cudaGetErrorString(e) + " (" +
                              cudaGetErrorName(e) + ")"};
  }
  if (count == 0) return CudaDevices{0, "cudaGetDeviceCount found none"};
  return CudaDevices{count, ""};
}

#endif  // RIGEL_HAVE_CUDA

Status CheckCudaPlacement(const std::string& host, int workers, const CudaDevices& devices) {
  if (workers <= devices.count) return Status::Ok();
  const std::string note = devices.note.empty() ? "" : " (" + devices.note + ")";
  std::string s = "--device cuda puts " + Plural(workers, "worker") + " on " + host;
  if (devices.count == 0) return FailedPrecondition(s + ", which has no usable CUDA device" + note);
  return FailedPrecondition(s + ", which has " + Plural(devices.count, "CUDA device") + note +
                            ", and NCCL needs a device of its own for each worker");
}

}  // namespace rigel::collectives
