// The rendezvous key-value store collectives bootstrap through: Gloo's pair
// addresses, NCCL's unique id. Keys are written once and read by every rank.
//
// Implementations: MemoryStore (ranks that are threads of one process),
// FileStore (processes sharing a directory: tests, benchmarks), and the
// scheduler's store in a distributed job (cluster/scheduler_store.h).
//
// Thread-safety: every implementation here is thread-safe.
#ifndef RIGEL_COLLECTIVES_STORE_H_
#define RIGEL_COLLECTIVES_STORE_H_

#include <chrono>
#include <map>
#include <string>

#include "common/mutex.h"
#include "common/status.h"

namespace rigel::collectives {

class Store {
 public:
  virtual ~Store() = default;
  // Sets `key` to `value` (a key set twice keeps the last value). Errors: the
  // store's (IoError, Unavailable).
  virtual Status Set(const std::string& key, const std::string& value) = 0;
  // Returns `key`'s value, waiting up to `timeout` for some rank to set it.
  // Errors: Unavailable naming the key when the wait runs out; the store's.
  virtual StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) = 0;
};

class MemoryStore : public Store {
 public:
  Status Set(const std::string& key, const std::string& value) override RIGEL_EXCLUDES(mu_);
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override
      RIGEL_EXCLUDES(mu_);

 private:
  Mutex mu_;
  CondVar cv_;  // a key was set
  std::map<std::string, std::string> values_ RIGEL_GUARDED_BY(mu_);
};

// One file per key under `dir` (created if missing), written whole under a
// temporary name and renamed, so a reader never sees half a value. Get polls.
class FileStore : public Store {
 public:
  explicit FileStore(std::string dir);
  Status Set(const std::string& key, const std::string& value) override;
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;

 private:
  std::string Path(const std::string& key) const;
  std::string dir_;
};

}  // namespace rigel::collectives

#endif  // RIGEL_COLLECTIVES_STORE_H_
