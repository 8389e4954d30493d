// The parameter servers' message types (ps/wire/ps.capnp) for the transport
// (transport/message_types.h): PsService, PsClient, RowCache and the
// checkpoint driver register them before they send or receive one.
#ifndef RIGEL_PS_WIRE_MESSAGES_H_
#define RIGEL_PS_WIRE_MESSAGES_H_

#include "ps/wire/ps.capnp.h"

namespace rigel::ps::wire {

// Registers every body of ps.capnp, with the checks the schema cannot state
// (a push's rows match its keys, a sync's versions match its keys).
// Runs before main in every program that links it; calling it from the
// constructors that use these messages is what links it. Idempotent;
// thread-safe.
void RegisterMessages();

}  // namespace rigel::ps::wire

#endif  // RIGEL_PS_WIRE_MESSAGES_H_
