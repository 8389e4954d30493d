// Worker-to-worker message types (worker/wire/handoff.capnp) for the
// transport (transport/message_types.h); the block hand-off registers them.
#ifndef RIGEL_WORKER_WIRE_MESSAGES_H_
#define RIGEL_WORKER_WIRE_MESSAGES_H_

#include "worker/wire/handoff.capnp.h"

namespace rigel::worker::wire {

// Registers every body of handoff.capnp (a hand-off's rows match its row
// range). Idempotent; thread-safe.
void RegisterMessages();

}  // namespace rigel::worker::wire

#endif  // RIGEL_WORKER_WIRE_MESSAGES_H_
