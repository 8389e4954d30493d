// Moving parameter rows between the worker's local copies (the kernel's
// memory) and the parameter servers, for the sync strategies
// (worker/sync/strategy.h). Deltas are taken against a base the caller
// keeps: what the servers hold for those rows, advanced exactly as a server
// adds the delta, so a worker that keeps rows across runs stays in step with
// the servers bit for bit.
//
// Errors: the parameter-server client's (a failed pull or push).
// Thread-safety: one thread at a time (the runner's).
#ifndef RIGEL_WORKER_SYNC_ROW_IO_H_
#define RIGEL_WORKER_SYNC_ROW_IO_H_

#include <cstdint>
#include <future>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "kernel/kernel.h"
#include "ps/client.h"

namespace rigel::worker::sync {

// Counters of one run (Runner's TaskResult::metrics).
struct SyncMetrics {
  double compute_s = 0, comm_s = 0, wait_s = 0;
  std::map<std::string, double> bytes;  // moved per strategy ("local.kept": not moved)
  std::vector<std::pair<std::string, double>> values;  // other named values of the run
};

class RowIo {
 public:
  // `params`: the local copies (rows x width floats each); `client` the
  // job's parameter-server client. Both must outlive the RowIo.
  RowIo(const std::vector<kernel::ParamBinding>* params, ps::PsClient* client)
      : params_(params), client_(client) {}

  ps::PsClient& client() { return *client_; }
  const kernel::ParamBinding& param(int p) const { return (*params_)[p]; }

  // Copies rows `keys` of parameter p out of / into the local copy.
  void Gather(int p, const std::vector<int64_t>& keys, std::vector<float>* out) const;
  void Scatter(int p, const std::vector<int64_t>& keys, const float* rows) const;

  // Pulls `keys` of p into the local copy (synchronous: every clock before
  // this worker's seen; else within the staleness bound); the rows also go
  // to *pulled when not null (otherwise they come in pieces of about 1 MiB,
  // one request after another). Bytes are counted under `strategy`.
  Status Pull(int p, const std::vector<int64_t>& keys, bool synchronous, std::vector<float>* pulled,
              SyncMetrics* m, const char* strategy);
  // Pulls `keys` of p (synchronous) into `b`, a run's binding of p whose
  // slot map (if any) holds every key; the rows also go to *pulled.
  Status PullInto(int p, const kernel::ParamBinding& b, const std::vector<int64_t>& keys,
                  std::vector<float>* pulled, SyncMetrics* m, const char* strategy);
  // Waits for `pull` (of `keys` of p) and stores it as Pull does; rows listed
  // in `keep_local` (sorted) keep their local values instead.
  Status Take(int p, const std::vector<int64_t>& keys,
              std::future<StatusOr<std::vector<float>>> pull, std::vector<float>* pulled,
              SyncMetrics* m, const char* strategy,
              const std::vector<int64_t>* keep_local = nullptr);
  // Pushes local - base for `keys` of p (base: keys.size() rows), leaving out
  // rows whose delta is all zero; base becomes what the servers then hold.
  Status PushDeltas(int p, const std::vector<int64_t>& keys, std::vector<float>* base,
                    SyncMetrics* m, const char* strategy);

 private:
  const std::vector<kernel::ParamBinding>* params_;
  ps::PsClient* client_;
};

}  // namespace rigel::worker::sync

#endif  // RIGEL_WORKER_SYNC_ROW_IO_H_
