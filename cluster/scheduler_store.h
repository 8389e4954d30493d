// The collectives' rendezvous store in a distributed job: keys live at the
// scheduler (cluster/rendezvous.h), reached over the member's transport.
//
// Thread-safety: thread-safe; Get blocks the calling thread, which must not
// be the transport's receive thread.
#ifndef RIGEL_CLUSTER_SCHEDULER_STORE_H_
#define RIGEL_CLUSTER_SCHEDULER_STORE_H_

#include <string>

#include "cluster/wire/messages.h"
#include "collectives/store.h"
#include "transport/transport.h"

namespace rigel::cluster {

class SchedulerStore : public collectives::Store {
 public:
  // `transport` (connected to the scheduler) must outlive the store.
  explicit SchedulerStore(transport::Transport* transport) : transport_(transport) {
    wire::RegisterMessages();
  }

  // Errors: the scheduler's refusal, Unavailable when it cannot be reached.
  Status Set(const std::string& key, const std::string& value) override;
  // Unavailable naming the key when no member set it within `timeout`.
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;

 private:
  transport::Transport* transport_;
};

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_SCHEDULER_STORE_H_
