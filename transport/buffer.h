// Buffer: an immutable, reference-counted view of bytes, the unit in which
// payload frames cross the transport without being copied.
//
// Ownership: a Buffer holds a shared owner (any std::shared_ptr) that keeps its
// bytes alive; copies of a Buffer share that owner. The bytes must not change
// while any Buffer referring to them exists: a transport may hand them to the
// kernel (or, over inproc and LoopbackTransport, to the receiver) long after
// Send returned, and releases its reference only when done. Received payload
// frames are Buffers whose owner is the transport's receive storage (for
// ZeroMQ, the zmq_msg_t itself), so keeping a received Buffer keeps only that
// frame's memory, and forwarding it in another message copies nothing.
//
// Thread-safety: a Buffer is a value; distinct Buffer objects (even sharing an
// owner) may be used from different threads concurrently.
#ifndef RIGEL_TRANSPORT_BUFFER_H_
#define RIGEL_TRANSPORT_BUFFER_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/check.h"

namespace rigel::transport {

static_assert(std::endian::native == std::endian::little,
              "the wire format stores keys and rows little-endian; a big-endian port must swap");

class Buffer {
 public:
  // An empty buffer (size 0, no owner).
  Buffer() = default;

  // Views `size` bytes at `data`, kept alive by `owner` (which may be null only
  // when the memory outlives every copy of this Buffer and every send using it,
  // e.g. static data).
  Buffer(std::shared_ptr<const void> owner, const void* data, size_t size)
      : owner_(std::move(owner)), data_(static_cast<const std::byte*>(data)), size_(size) {}

  // A new heap copy of `size` bytes at `data`, aligned to 64 bytes.
  static Buffer Copy(const void* data, size_t size);

  // Takes `values` without copying: the vector becomes the owner.
  template <typename T>
  static Buffer FromVector(std::vector<T> values) {
    static_assert(std::is_trivially_copyable_v<T>);
    auto owner = std::make_shared<const std::vector<T>>(std::move(values));
    const std::vector<T>& v = *owner;
    return Buffer(owner, v.data(), v.size() * sizeof(T));
  }

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::shared_ptr<const void>& owner() const { return owner_; }

  // Whether the bytes can be viewed as T values (aligned, whole elements).
  template <typename T>
  bool IsArrayOf() const {
    return size_ % sizeof(T) == 0 && reinterpret_cast<uintptr_t>(data_) % alignof(T) == 0;
  }

  // The bytes as T values. Precondition (checked): IsArrayOf<T>(). Frames named
  // by a validated message's KeysRef/RowsRef always satisfy it.
  template <typename T>
  std::span<const T> As() const {
    static_assert(std::is_trivially_copyable_v<T>);
    RIGEL_CHECK_MSG(IsArrayOf<T>(), "buffer is misaligned or not a whole number of elements");
    return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)};
  }

  // Bytes [offset, offset + size) sharing this buffer's owner.
  // Precondition (checked): the range lies inside the buffer.
  Buffer Slice(size_t offset, size_t size) const {
    RIGEL_CHECK(offset <= size_ && size <= size_ - offset);
    return Buffer(owner_, data_ + offset, size);
  }

 private:
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_BUFFER_H_
