// How many CUDA devices this host has, and whether a job's workers fit them:
// NCCL refuses two ranks of one communicator on one device, so a --device
// cuda job needs a device of its own for each worker a host runs. `rigel run`
// and scripts/rigel-ssh (through `rigel devices`) check this before any
// process starts (docs/collectives.md, "Workers per host"). Implemented
// beside the NCCL backend, in collectives/nccl/devices.cc.
//
// Test hook: in a build with CUDA, the environment variable
// RIGEL_FAKE_CUDA_DEVICES=N (a whole number, 0 to 1024; empty means unset)
// replaces the count the CUDA runtime gives, so that placement can be tested
// on a machine without a GPU. It changes nothing else: workers still join
// NCCL on the real devices.
//
// Target rigel::collectives_devices (the CUDA runtime only, no NCCL nor
// Gloo). Thread-safe.
#ifndef RIGEL_COLLECTIVES_DEVICES_H_
#define RIGEL_COLLECTIVES_DEVICES_H_

#include <string>

#include "common/status.h"

namespace rigel::collectives {

inline constexpr char kFakeCudaDevicesEnv[] = "RIGEL_FAKE_CUDA_DEVICES";

struct CudaDevices {
  int count = 0;
  // Why there are none when count is 0 ("cudaGetDeviceCount says ..."), or
  // "RIGEL_FAKE_CUDA_DEVICES=N" when the test hook set the count; else empty.
  std::string note;
};

// The CUDA devices this process can use (CUDA_VISIBLE_DEVICES applies). A
// CUDA runtime that finds none, or fails (no driver, a driver too old), gives
// 0 with its reason in `note`. Errors: Unavailable when this build has no
// CUDA (the message says how to get it, or to use --device cpu);
// InvalidArgument naming the variable when RIGEL_FAKE_CUDA_DEVICES is set to
// anything but a whole number from 0 to 1024.
StatusOr<CudaDevices> CountCudaDevices();

// OK when `workers` workers fit `devices` on `host` (one device each).
// Otherwise FailedPrecondition naming the host, the workers and the devices:
// "--device cuda puts 2 workers on localhost, which has 1 CUDA device, and
// NCCL needs a device of its own for each worker", or, with no device,
// "--device cuda puts 1 worker on localhost, which has no usable CUDA device
// (NOTE)". Callers add the remedy that fits their command line.
Status CheckCudaPlacement(const std::string& host, int workers, const CudaDevices& devices);

}  // namespace rigel::collectives

#endif  // RIGEL_COLLECTIVES_DEVICES_H_
