// What a worker adds to an error of its exchanges with the servers, so that a
// user reads the limit that applied and what to change, not only which
// request failed. Pure functions; thread-safe.
#ifndef RIGEL_WORKER_EXCHANGE_ERRORS_H_
#define RIGEL_WORKER_EXCHANGE_ERRORS_H_

#include "cluster/job_options.h"
#include "common/status.h"

namespace rigel::worker {

// `st` unchanged, unless it is the transport's timeout of a request to a
// server (Unavailable, "... to server:N timed out after ..."): then the same
// code and message, followed by --exchange-timeout-ms's value and the likely
// causes (a row cache's large exchange under --cache-mb, a dead server, a
// loaded machine).
Status WithExchangeTimeoutCauses(Status st, const cluster::JobOptions& job);

}  // namespace rigel::worker

#endif  // RIGEL_WORKER_EXCHANGE_ERRORS_H_
