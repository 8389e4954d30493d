// The scheduler's rendezvous store: the key-value store the workers'
// collectives bootstrap through (collectives/store.h; the member
// side is cluster/scheduler_store.h). Keys live for the whole job.
//
//  - storeSet (request) -> ack; the key's pending gets are answered.
//  - storeGet (request) -> storeValue once the key is set, or an Unavailable
//    error naming the key after the request's timeoutMillis.
//
// Thread-safety: every method may be called from any thread.
#ifndef RIGEL_CLUSTER_RENDEZVOUS_H_
#define RIGEL_CLUSTER_RENDEZVOUS_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "cluster/wire/messages.h"
#include "common/mutex.h"
#include "transport/transport.h"

namespace rigel::cluster {

class Rendezvous {
 public:
  using Clock = std::chrono::steady_clock;
  // Values larger than this are refused (collectives exchange addresses and
  // ids of a few hundred bytes per rank).
  static constexpr size_t kMaxValueBytes = size_t{1} << 20;

  explicit Rendezvous(transport::Transport* transport) : transport_(transport) {
    wire::RegisterMessages();
  }

  // Answers storeSet/storeGet; false for any other message. Never blocks.
  bool Handle(const transport::InMessage& msg) RIGEL_EXCLUDES(mu_);
  // Fails the gets whose timeout has passed by `now`.
  void Expire(Clock::time_point now) RIGEL_EXCLUDES(mu_);

 private:
  struct Waiter {
    transport::InMessage request;
    Clock::time_point deadline;
  };
  transport::OutMessage Value(const std::string& key, const std::string& value) const;

  transport::Transport* transport_;
  Mutex mu_;
  std::map<std::string, std::string> values_ RIGEL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<Waiter>> waiting_ RIGEL_GUARDED_BY(mu_);
};

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_RENDEZVOUS_H_
