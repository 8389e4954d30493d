// A test seam of the UCX backend: sends frames exactly as given, bypassing
// the encoder and ValidateOutgoing, so tests can show what a receiver does
// with malformed messages from a peer that passed the handshake
// (tests/transport/conformance.h). Not for production code.
#ifndef RIGEL_TRANSPORT_UCX_TESTING_H_
#define RIGEL_TRANSPORT_UCX_TESTING_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "transport/transport.h"

namespace rigel::transport::ucx_testing {

// Sends `frames` (the first is the header frame) from `from`, a UCX
// transport, to `to` as one message, after the connection's handshake.
// InvalidArgument if `from` is not a UCX transport or has no route to `to`.
Status SendRawFrames(Transport& from, const PeerId& to, const std::vector<std::string>& frames);

}  // namespace rigel::transport::ucx_testing

#endif  // RIGEL_TRANSPORT_UCX_TESTING_H_
