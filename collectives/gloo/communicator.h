// The Gloo backend: collectives over TCP on host memory (libgloo).
// Joining: every rank opens a Gloo TCP device on CommunicatorOptions::host
// and exchanges its pair addresses through the Store (Gloo's full-mesh
// rendezvous) twice, so each rank holds two connections to every other: one
// in Gloo's sync mode for AllReduce of up to 8 MiB (the caller's thread
// reads the socket), one served by Gloo's device thread for the rest. Every
// pair is checked after joining, and the join made again on fresh ports when
// a stray connection was taken for a peer (gloo/mesh.h).
// AllReduce uses Gloo's ring algorithms: each element is reduced at one rank
// and the result copied to the others, so every rank gets the same bits.
// Keeps a 4 MiB scratch buffer and the ring algorithms made per piece size.
//
// Errors, thread-safety: as collectives::Communicator.
#ifndef RIGEL_COLLECTIVES_GLOO_COMMUNICATOR_H_
#define RIGEL_COLLECTIVES_GLOO_COMMUNICATOR_H_

#include <memory>

#include "collectives/communicator.h"

namespace rigel::collectives::gloo_backend {

// Joins the ranks (blocks until all joined or o.timeout ran out).
StatusOr<std::unique_ptr<Communicator>> NewGlooCommunicator(Store* store,
                                                            const CommunicatorOptions& o);

}  // namespace rigel::collectives::gloo_backend

#endif  // RIGEL_COLLECTIVES_GLOO_COMMUNICATOR_H_
