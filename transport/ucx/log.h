// UCX's own log lines, routed into Rigel's log (common/logging.h) instead of
// UCX's default, which writes them to standard output, where a job's prints
// go. Internal to the UCX backend.
#ifndef RIGEL_TRANSPORT_UCX_LOG_H_
#define RIGEL_TRANSPORT_UCX_LOG_H_

namespace rigel::transport::ucx_internal {

// Installs the handler once per process (later calls do nothing). UCX's
// errors and warnings become warnings of component "ucx", the first few of
// each source line, then debug lines; everything below UCX's own level
// (UCX_LOG_LEVEL, default warn) stays unseen as before. Thread-safe.
void RouteUcxLog();

}  // namespace rigel::transport::ucx_internal

#endif  // RIGEL_TRANSPORT_UCX_LOG_H_
