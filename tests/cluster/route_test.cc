// The local address that routes to a host (what members listen on).
#include "cluster/route.h"

#include <gtest/gtest.h>

namespace rigel::cluster {
namespace {

TEST(LocalAddressTowards, LoopbackAndUnresolvable) {
  EXPECT_EQ(*LocalAddressTowards("127.0.0.1", 80), "127.0.0.1");
  EXPECT_EQ(*LocalAddressTowards("localhost", 80), "127.0.0.1");
  auto bad = LocalAddressTowards("no-such-host.invalid", 80);
  EXPECT_EQ(bad.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(bad.status().message().find("'no-such-host.invalid' does not resolve"),
            std::string::npos);
}

TEST(ListenTowards, FollowsTheSchedulersAddress) {
  EXPECT_EQ(*ListenTowards("tcp://127.0.0.1:5000"), "tcp://127.0.0.1:*");
  EXPECT_EQ(*ListenTowards("tcp://localhost:5000"), "tcp://127.0.0.1:*");
  // Not TCP: loopback, as before.
  EXPECT_EQ(*ListenTowards("ipc:///tmp/x"), "tcp://127.0.0.1:*");
  EXPECT_EQ(ListenTowards("tcp://no-such-host.invalid:5000").status().code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rigel::cluster
