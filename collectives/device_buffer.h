// DeviceBuffer: floats in the memory of one CUDA device, the buffers a
// communicator whose memory() is Memory::kCuda (the NCCL backend,
// communicator.h) runs its collectives on. Implemented with the NCCL backend
// (collectives/nccl/communicator.cc), in target rigel::collectives.
//
// Ownership: a buffer owns its device memory and frees it on destruction;
// move-only. A default-constructed (or moved-from) buffer holds nothing.
// Errors: Unavailable, with the reason, when this build has no CUDA
// (RIGEL_HAVE_CUDA 0: the same words as CountCudaDevices, devices.h), when
// the device does not exist, or when memory runs out; InvalidArgument for a
// bad device number or a count larger than the buffer.
// Thread-safety: one thread at a time. Calls make the buffer's device the
// calling thread's current CUDA device.
#ifndef RIGEL_COLLECTIVES_DEVICE_BUFFER_H_
#define RIGEL_COLLECTIVES_DEVICE_BUFFER_H_

#include <cstddef>

#include "common/status.h"

namespace rigel::collectives {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // Allocates `count` (uninitialised) floats on CUDA device `device`.
  static StatusOr<DeviceBuffer> Allocate(size_t count, int device);
  // Copy host[0, count) to data()[0, count) and back (synchronous).
  // InvalidArgument when count > count().
  Status CopyFromHost(const float* host, size_t count);
  Status CopyToHost(float* host, size_t count) const;
  float* data() const { return data_; }
  size_t count() const { return count_; }

 private:
  float* data_ = nullptr;
  size_t count_ = 0;
  int device_ = 0;
};

}  // namespace rigel::collectives

#endif  // RIGEL_COLLECTIVES_DEVICE_BUFFER_H_
