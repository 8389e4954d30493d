// worker/exchange_errors.h: a row exchange that timed out says which limit
// applied and what to change; every other error passes unchanged.
#include "worker/exchange_errors.h"

#include <gtest/gtest.h>

#include <string>

namespace rigel::worker {
namespace {

TEST(ExchangeErrors, ATimedOutRowExchangeNamesItsLimitAndLikelyCauses) {
  cluster::JobOptions job;
  job.exchange_timeout_ms = 2500;
  job.cache_mb = 64;
  const std::string transport =
      "worker:1: request #43 (rowSync) to server:0 timed out after 2500 ms (deadline exceeded: "
      "no response; a late one is counted in late_responses)";
  const Status st = WithExchangeTimeoutCauses(Unavailable(transport), job);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message().rfind(transport + "; ", 0), 0u) << st.message();
  for (const char* part : {"--exchange-timeout-ms (2500 ms now)", "--cache-mb, 64 MiB now",
                           "a server that died", "more --servers"}) {
    EXPECT_NE(st.message().find(part), std::string::npos) << part << " in " << st.message();
  }
}

TEST(ExchangeErrors, OtherErrorsPassUnchanged) {
  const cluster::JobOptions job;
  for (const Status& st :
       {Unavailable("scheduler: request #2 (task) to worker:0 timed out after 10000 ms"),
        Unavailable("server:0 is gone"), InvalidArgument("to server:0 timed out after 1 ms"),
        Status::Ok()}) {
    const Status got = WithExchangeTimeoutCauses(st, job);
    EXPECT_EQ(got.code(), st.code());
    EXPECT_EQ(got.message(), st.message());
  }
}

}  // namespace
}  // namespace rigel::worker
