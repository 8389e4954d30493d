#include "worker/exchange_errors.h"

#include <string>

namespace rigel::worker {

// The transport's timeout says which request to which peer; a user needs
// the limit that applied and what to change. Only row exchanges with the
// servers are meant: the scheduler's own requests have their own limits.
Status WithExchangeTimeoutCauses(Status st, const cluster::JobOptions& job) {
  const std::string& m = st.message();
  if (st.code() != StatusCode::kUnavailable || m.find("timed out after") == std::string::npos ||
      m.find(" to server:") == std::string::npos) {
    return st;
  }
  return Unavailable(
      m + "; a worker waits --exchange-timeout-ms (" + std::to_string(job.exchange_timeout_ms) +
      " ms now) for a server's answer to one row exchange. Likely causes: a server busy with "
      "exchanges far larger than the rows a step uses (each worker's row caches take up to "
      "--cache-mb, " +
      std::to_string(job.cache_mb) +
      " MiB now: a smaller one moves only the rows used), a server that died or stopped (its "
      "log in the run directory says why), or a machine too loaded to answer in time (more "
      "--servers, or a longer --exchange-timeout-ms)");
}

}  // namespace rigel::worker
