// The Gloo backend: collectives over TCP on host memory (libgloo).
// Joining: every rank opens a Gloo TCP device on CommunicatorOptions::host
// and exchanges its pair addresses through the Store (Gloo's full-mesh
// rendezvous), so each rank holds one connection to every other.
// AllReduce uses Gloo's ring algorithm: each element is reduced at one rank
// and the result copied to the others, so every rank gets the same bits.
//
// Errors, thread-safety: as collectives::Communicator.
#ifndef RIGEL_TRANSPORT_COLLECTIVES_GLOO_COMMUNICATOR_H_
#define RIGEL_TRANSPORT_COLLECTIVES_GLOO_COMMUNICATOR_H_

#include <memory>

#include "transport/collectives/communicator.h"

namespace rigel::transport::collectives::gloo_backend {

// Joins the ranks (blocks until all joined or o.timeout ran out).
StatusOr<std::unique_ptr<Communicator>> NewGlooCommunicator(Store* store,
                                                            const CommunicatorOptions& o);

}  // namespace rigel::transport::collectives::gloo_backend

#endif  // RIGEL_TRANSPORT_COLLECTIVES_GLOO_COMMUNICATOR_H_
