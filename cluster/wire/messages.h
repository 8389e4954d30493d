// The cluster's message types for the transport (transport/message_types.h):
// membership (membership.capnp), the setup (setup.capnp), the scheduler's
// control of workers (control.capnp) and the rendezvous store (store.capnp).
// Members, the coordinator, the driver and both ends of the store register
// them before they send or receive one.
#ifndef RIGEL_CLUSTER_WIRE_MESSAGES_H_
#define RIGEL_CLUSTER_WIRE_MESSAGES_H_

#include "cluster/wire/control.capnp.h"
#include "cluster/wire/membership.capnp.h"
#include "cluster/wire/setup.capnp.h"
#include "cluster/wire/store.capnp.h"

namespace rigel::cluster::wire {

// Registers every body of the four schemas (a registrant's rank is -1 or
// more). Idempotent; thread-safe.
void RegisterMessages();

}  // namespace rigel::cluster::wire

#endif  // RIGEL_CLUSTER_WIRE_MESSAGES_H_
