// The shared, immutable state behind InMessage handles (internal to the
// transport library: codec.cc builds it, message.cc reads it).
#ifndef RIGEL_TRANSPORT_INTERNAL_IN_MESSAGE_STATE_H_
#define RIGEL_TRANSPORT_INTERNAL_IN_MESSAGE_STATE_H_

#include <capnp/serialize.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/buffer.h"
#include "transport/message.h"
#include "transport/wire/envelope.capnp.h"

namespace rigel::transport::internal {

struct InMessageState {
  // Headers up to this size are copied into the state itself (no allocation).
  static constexpr size_t kInlineHeaderBytes = 256;

  PeerId from;
  std::shared_ptr<const std::string> reply_address;  // may be null
  // 8-byte aligned copy of the header: Cap'n Proto reads words in place.
  alignas(8) std::byte header_inline[kInlineHeaderBytes];
  // Larger first frames; shared because packed payload Buffers alias it.
  std::shared_ptr<uint64_t[]> header_heap;
  // Constructed in place once the header is copied; never moved (the state is
  // heap-allocated and shared, and the reader points into header storage).
  std::optional<capnp::FlatArrayMessageReader> reader;
  wire::Envelope::Reader root;
  std::vector<Buffer> frames;
  size_t wire_bytes = 0;
};

}  // namespace rigel::transport::internal

#endif  // RIGEL_TRANSPORT_INTERNAL_IN_MESSAGE_STATE_H_
