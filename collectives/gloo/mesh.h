// Joining Gloo ranks into a checked full mesh (internal to the Gloo backend).
//
// Gloo's TCP pairs (this Gloo, Debian's 2022 snapshot) each listen on an
// ephemeral port and take the first connection that arrives, from whoever
// it is. A stray connection to that port (a ZeroMQ socket of another process
// reconnecting to an address that used to be its peer's, a port scan) is
// taken for the peer: the join then fails with "Connection closed by peer",
// or worse seems to succeed and the first collective fails. So JoinMesh
// checks every pair by exchanging a token per rank, and when any rank's
// attempt failed every rank tries again on fresh ports (each rank tells the
// others through the store how its attempt went, so they retry together).
// A rank that is missing, or a store that fails, ends the join at once.
#ifndef RIGEL_COLLECTIVES_GLOO_MESH_H_
#define RIGEL_COLLECTIVES_GLOO_MESH_H_

#include <signal.h>

#include <memory>

#include "collectives/communicator.h"
#include "collectives/store.h"
#include "common/status.h"

namespace gloo {
class Context;
namespace transport {
class Device;
}  // namespace transport
}  // namespace gloo

namespace rigel::collectives::gloo_backend {

// How many times a rank joins before it gives up on stray connections.
inline constexpr int kJoinAttempts = 4;

// Gloo writes to its sockets with writev(2), which raises SIGPIPE when the
// peer has gone away (it cannot pass MSG_NOSIGNAL); SIGPIPE's default action
// kills the process before Gloo can report the error. So the threads that run
// Gloo code keep SIGPIPE blocked: the calling thread while this object lives,
// and Gloo's device thread for good (it inherits the mask of the thread that
// creates the device). A SIGPIPE raised while blocked is discarded; the write
// fails with EPIPE and Gloo reports the closed connection. Not copyable.
class SigpipeBlocker {
 public:
  SigpipeBlocker();
  ~SigpipeBlocker();
  SigpipeBlocker(const SigpipeBlocker&) = delete;
  SigpipeBlocker& operator=(const SigpipeBlocker&) = delete;

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

// One rank's end of the mesh: the device (its thread serves `context`) and
// two contexts connected to every other rank: `context` for Gloo's
// unbound-buffer collectives, `sync_context` with its pairs in sync mode.
struct Mesh {
  std::shared_ptr<::gloo::transport::Device> device;
  std::shared_ptr<::gloo::Context> context;
  std::shared_ptr<::gloo::Context> sync_context;
};

// Joins rank o.rank of o.size through `store` (keys under o.prefix; retries
// under o.prefix + "/retryN"), checking every pair. Blocks until all ranks
// joined. Errors: the store's when a rank does not publish its addresses or
// its outcome within o.timeout (a missing rank) or the store fails;
// Unavailable naming the first failure when kJoinAttempts attempts all
// failed. Thread-safe for different `o.rank`s on one store.
StatusOr<Mesh> JoinMesh(Store* store, const CommunicatorOptions& o);

}  // namespace rigel::collectives::gloo_backend

#endif  // RIGEL_COLLECTIVES_GLOO_MESH_H_
