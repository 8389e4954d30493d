// Tests of the collectives layer: the rendezvous stores, the Gloo backend with
// ranks as threads of this process and as forked processes that die or hang,
// and tensor fusion.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/fusion.h"
#include "collectives/store.h"

namespace rigel::collectives {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double MillisSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A fresh directory under /tmp, removed with everything in it on scope exit.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/rigel-collectives-test-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    EXPECT_NE(d, nullptr) << std::strerror(errno);
    path_ = d ? d : "/tmp/rigel-collectives-test-failed";
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------
// Stores

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      store_ = std::make_unique<MemoryStore>();
    } else {
      store_ = std::make_unique<FileStore>(dir_.path() + "/store");
    }
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, SetThenGet) {
  ASSERT_TRUE(store_->Set("a", "1").ok());
  ASSERT_TRUE(store_->Set("b", std::string("x\0y\nz", 5)).ok());
  ASSERT_TRUE(store_->Set("empty", "").ok());
  auto a = store_->Get("a", milliseconds(1000));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, "1");
  auto b = store_->Get("b", milliseconds(1000));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(*b, std::string("x\0y\nz", 5));
  auto e = store_->Get("empty", milliseconds(1000));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(*e, "");
  // A key set twice keeps the last value.
  ASSERT_TRUE(store_->Set("a", "22").ok());
  a = store_->Get("a", milliseconds(1000));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, "22");
}

TEST_P(StoreTest, GetWaitsForALaterSetFromAnotherThread) {
  std::atomic<bool> set{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(200));
    set = true;
    EXPECT_TRUE(store_->Set("late/key", "value").ok());
  });
  const auto t0 = Clock::now();
  auto v = store_->Get("late/key", milliseconds(10000));
  const double ms = MillisSince(t0);
  setter.join();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(set.load());
  EXPECT_EQ(*v, "value");
  EXPECT_GE(ms, 150);
  EXPECT_LT(ms, 5000);
}

TEST_P(StoreTest, GetTimesOutWithUnavailableNamingTheKey) {
  ASSERT_TRUE(store_->Set("other", "x").ok());
  const auto t0 = Clock::now();
  auto v = store_->Get("job/never:set", milliseconds(300));
  const double ms = MillisSince(t0);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kUnavailable) << v.status().ToString();
  EXPECT_NE(v.status().message().find("job/never:set"), std::string::npos) << v.status().message();
  EXPECT_GE(ms, 290);
  EXPECT_LT(ms, 2000);
}

// Two threads setting one key many times: every Set succeeds and the value
// read back is always one of the values written, whole.
TEST_P(StoreTest, ConcurrentSetsOfOneKey) {
  const std::string v1(1000, '1'), v2(3000, '2');
  std::atomic<int> failures{0};
  auto writer = [&](const std::string& v) {
    for (int i = 0; i < 200; ++i) {
      if (!store_->Set("shared", v).ok()) ++failures;
    }
  };
  std::thread t1(writer, v1), t2(writer, v2);
  for (int i = 0; i < 50; ++i) {
    auto got = store_->Get("shared", milliseconds(5000));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == v1 || *got == v2) << "torn value of " << got->size() << " bytes";
  }
  t1.join();
  t2.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Kinds, StoreTest, ::testing::Values("memory", "file"),
                         [](const auto& info) { return info.param; });

// Keys with '/' and ':' (as Gloo's are) and others that are not plain file
// names each get their own value, and only once set.
TEST(FileStoreTest, KeysThatAreNotFileNames) {
  TempDir dir;
  FileStore store(dir.path() + "/nested/dir");  // created on first Set
  const std::string tmp_like = "a.tmp." + std::to_string(::getpid());
  const std::vector<std::string> keys = {"rigel/0", "rigel:0", "rigel%2f0", "/abs/path",
                                         "a/../b",  "a",       tmp_like,    ".",
                                         "..",      "",        "sp ace",    "\xff\x01"};
  for (size_t i = 0; i < keys.size(); ++i) {
    // Nothing is readable before it is set.
    auto before = store.Get(keys[i], milliseconds(0));
    EXPECT_FALSE(before.ok()) << "key '" << keys[i] << "' read as '" << *before << "'";
    Status s = store.Set(keys[i], "value " + std::to_string(i));
    EXPECT_TRUE(s.ok()) << "key '" << keys[i] << "': " << s.ToString();
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    auto v = store.Get(keys[i], milliseconds(1000));
    ASSERT_TRUE(v.ok()) << "key '" << keys[i] << "': " << v.status().ToString();
    EXPECT_EQ(*v, "value " + std::to_string(i)) << "key '" << keys[i] << "'";
  }
  // Nothing was written outside the store's directory.
  size_t outside = 0;
  for (const auto& e : fs::directory_iterator(dir.path()))
    outside += e.path().filename() != "nested";
  EXPECT_EQ(outside, 0u);
}

// Forks a child that reports through a pipe and always exits (with _exit).
// The destructor kills and reaps a child still running, so a failing test
// leaves no process behind; the child dies with this process too.
class Child {
 public:
  // Runs body(report_fd) in a child process; its return value is the exit code.
  explicit Child(const std::function<int(int)>& body) {
    int fds[2];
    if (::pipe(fds) != 0) {
      ADD_FAILURE() << "pipe: " << std::strerror(errno);
      return;
    }
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
      ADD_FAILURE() << "fork: " << std::strerror(errno);
      ::close(fds[0]);
      ::close(fds[1]);
      return;
    }
    if (pid_ == 0) {
      ::close(fds[0]);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(120);
      int code = 121;
      try {
        code = body(fds[1]);
      } catch (...) {
        code = 122;
      }
      ::_exit(code);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // Reads the child's report (until it closes the pipe or `timeout` runs
  // out) as key=value lines.
  std::map<std::string, std::string> Report(milliseconds timeout) {
    std::string text;
    const auto end = Clock::now() + timeout;
    while (fd_ >= 0 && Clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, size_t(n));
    }
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      auto eq = line.find('=');
      if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return out;
  }

  // Waits up to `timeout` for the child to exit; its wait status, or nullopt.
  std::optional<int> Wait(milliseconds timeout) {
    const auto end = Clock::now() + timeout;
    while (pid_ > 0 && !reaped_) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return st;
      }
      if (r < 0 || Clock::now() > end) return std::nullopt;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return std::nullopt;
  }

  // Waits up to `timeout` for the child to be stopped by a signal.
  bool WaitStopped(milliseconds timeout) {
    const auto end = Clock::now() + timeout;
    while (pid_ > 0 && !reaped_ && Clock::now() < end) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG | WUNTRACED);
      if (r == pid_ && WIFSTOPPED(st)) return true;
      if (r == pid_) {
        reaped_ = true;
        return false;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
};

void Put(int fd, const std::string& key, const std::string& value) {
  std::string line = key + "=" + value + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n <= 0) return;
    p += n;
    left -= size_t(n);
  }
}

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

TEST(FileStoreTest, TwoProcessesShareADirectory) {
  TempDir dir;
  Child child([&](int fd) {
    FileStore store(dir.path());
    std::this_thread::sleep_for(milliseconds(100));
    if (!store.Set("child/hello:1", "from child").ok()) return 2;
    auto reply = store.Get("parent/reply:1", milliseconds(10000));
    Put(fd, "reply", reply.ok() ? *reply : OneLine(reply.status().ToString()));
    return reply.ok() && *reply == "from parent" ? 0 : 3;
  });
  FileStore store(dir.path());
  auto v = store.Get("child/hello:1", milliseconds(10000));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "from child");
  ASSERT_TRUE(store.Set("parent/reply:1", "from parent").ok());
  auto report = child.Report(milliseconds(10000));
  EXPECT_EQ(report["reply"], "from parent");
  auto st = child.Wait(milliseconds(10000));
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << "wait status " << *st;
}

// ---------------------------------------------------------------------------
// Gloo, ranks as threads

CommunicatorOptions Options(int rank, int size, milliseconds timeout = milliseconds(5000)) {
  CommunicatorOptions o;
  o.rank = rank;
  o.size = size;
  o.prefix = "test";
  o.timeout = timeout;
  return o;
}

// Runs fn(comm) for ranks 0..size-1, each on its own thread with its own
// Gloo communicator, all joined through one MemoryStore.
void RunRanks(int size, const std::function<void(Communicator&)>& fn,
              milliseconds timeout = milliseconds(5000)) {
  MemoryStore store;
  std::vector<Status> joined(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      auto comm = Make(Backend::kGloo, &store, Options(r, size, timeout));
      if (!comm.ok()) {
        joined[r] = comm.status();
        return;
      }
      EXPECT_EQ((*comm)->rank(), r);
      EXPECT_EQ((*comm)->size(), size);
      fn(**comm);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < size; ++r) EXPECT_TRUE(joined[r].ok()) << r << ": " << joined[r].ToString();
}

class GlooTest : public ::testing::TestWithParam<int> {};

TEST_P(GlooTest, AllReduceSumAndMean) {
  const int n = GetParam();
  for (size_t count : {size_t{1}, size_t{2}, size_t{7}, size_t{1000}, size_t{65537}}) {
    RunRanks(n, [&](Communicator& c) {
      const int r = c.rank();
      std::vector<float> sum(count), mean(count);
      for (size_t i = 0; i < count; ++i) {
        sum[i] = float(r * 100) + float(i % 1000);
        mean[i] = float(r + 1) * 0.5f + float(i % 7);
      }
      ASSERT_TRUE(c.AllReduce(sum.data(), count, ReduceOp::kSum).ok());
      ASSERT_TRUE(c.AllReduce(mean.data(), count, ReduceOp::kMean).ok());
      // Sum over ranks of r*100 is 100*n(n-1)/2; of (r+1)/2 is n(n+1)/4.
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(sum[i], float(100 * n * (n - 1) / 2) + float(n) * float(i % 1000))
            << "rank " << r << " element " << i << " of " << count;
        ASSERT_FLOAT_EQ(mean[i], float(n + 1) / 4.0f + float(i % 7))
            << "rank " << r << " element " << i << " of " << count;
      }
    });
  }
}

// Random floats of very different magnitudes, so that the order of summation
// changes the result: every rank still gets the same bits, close to the
// exact sum.
TEST_P(GlooTest, AllReduceGivesEveryRankTheSameBits) {
  const int n = GetParam();
  const size_t count = 100003;
  std::vector<std::vector<float>> inputs(n), outputs(n), means(n);
  std::vector<double> exact(count, 0.0);
  for (int r = 0; r < n; ++r) {
    std::mt19937 gen(1234 + r);
    std::normal_distribution<float> normal;
    std::uniform_int_distribution<int> exponent(-6, 6);
    inputs[r].resize(count);
    for (size_t i = 0; i < count; ++i) {
      inputs[r][i] = normal(gen) * std::ldexp(1.0f, 3 * exponent(gen));
      exact[i] += inputs[r][i];
    }
  }
  RunRanks(n, [&](Communicator& c) {
    std::vector<float> v = inputs[c.rank()];
    ASSERT_TRUE(c.AllReduce(v.data(), count, ReduceOp::kSum).ok());
    outputs[c.rank()] = std::move(v);
    v = inputs[c.rank()];
    ASSERT_TRUE(c.AllReduce(v.data(), count, ReduceOp::kMean).ok());
    means[c.rank()] = std::move(v);
  });
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(outputs[r].size(), count);
    ASSERT_EQ(means[r].size(), count);
  }
  for (int r = 1; r < n; ++r) {
    EXPECT_EQ(std::memcmp(outputs[0].data(), outputs[r].data(), count * sizeof(float)), 0)
        << "sum: rank " << r << " differs from rank 0";
    EXPECT_EQ(std::memcmp(means[0].data(), means[r].data(), count * sizeof(float)), 0)
        << "mean: rank " << r << " differs from rank 0";
  }
  double max_abs = 0;
  for (int r = 0; r < n; ++r) {
    for (float x : inputs[r]) max_abs = std::max(max_abs, double(std::fabs(x)));
  }
  for (size_t i = 0; i < count; ++i) {
    ASSERT_NEAR(outputs[0][i], exact[i], 1e-6 * max_abs) << i;
    ASSERT_NEAR(means[0][i], exact[i] / n, 1e-6 * max_abs) << i;
  }
}

TEST_P(GlooTest, CountZeroIsANoOp) {
  RunRanks(GetParam(), [&](Communicator& c) {
    float sentinel = 42;
    EXPECT_TRUE(c.AllReduce(&sentinel, 0, ReduceOp::kSum).ok());
    EXPECT_TRUE(c.AllReduce(&sentinel, 0, ReduceOp::kMean).ok());
    EXPECT_TRUE(c.AllReduce(nullptr, 0, ReduceOp::kSum).ok());
    EXPECT_TRUE(c.Broadcast(&sentinel, 0, 0).ok());
    float out = 7;
    EXPECT_TRUE(c.AllGather(&sentinel, 0, &out).ok());
    EXPECT_EQ(sentinel, 42);
    EXPECT_EQ(out, 7);
    // The ranks are still in step afterwards.
    float one = 1;
    ASSERT_TRUE(c.AllReduce(&one, 1, ReduceOp::kSum).ok());
    EXPECT_EQ(one, float(c.size()));
  });
}

TEST_P(GlooTest, BroadcastFromANonZeroRoot) {
  const int n = GetParam();
  const int root = n - 1;
  const size_t count = 4099;
  RunRanks(n, [&](Communicator& c) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = float(c.rank() * 10000 + int(i));
    ASSERT_TRUE(c.Broadcast(v.data(), count, root).ok());
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(v[i], float(root * 10000 + int(i))) << "rank " << c.rank() << " element " << i;
    }
    // A root that is not a rank is refused on every rank alike; the ranks
    // stay in step.
    EXPECT_EQ(c.Broadcast(v.data(), count, n).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(c.Broadcast(v.data(), count, -1).code(), StatusCode::kInvalidArgument);
    float x = float(c.rank() + 5);
    ASSERT_TRUE(c.Broadcast(&x, 1, 1).ok());
    EXPECT_EQ(x, 6.0f);
  });
}

TEST_P(GlooTest, AllGather) {
  const int n = GetParam();
  const size_t count = 5;
  RunRanks(n, [&](Communicator& c) {
    std::vector<float> in(count);
    for (size_t i = 0; i < count; ++i) in[i] = float(c.rank() * 10 + int(i));
    std::vector<float> out(n * count + 1, -1.0f);  // one guard element
    ASSERT_TRUE(c.AllGather(in.data(), count, out.data()).ok());
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(out[r * count + i], float(r * 10 + int(i))) << "rank " << c.rank();
      }
    }
    EXPECT_EQ(out[n * count], -1.0f) << "wrote past the end";
  });
}

// The last rank arrives late; nobody leaves the barrier before it arrived.
TEST_P(GlooTest, BarrierWaitsForALateRank) {
  const int n = GetParam();
  std::atomic<bool> late_arrived{false};
  std::atomic<Clock::rep> arrival{0};  // when the late rank entered the barrier
  RunRanks(n, [&](Communicator& c) {
    if (c.rank() == n - 1) {
      std::this_thread::sleep_for(milliseconds(300));
      arrival = Clock::now().time_since_epoch().count();
      late_arrived = true;
    }
    ASSERT_TRUE(c.Barrier().ok());
    // Measured against the late rank's arrival, not this rank's own start:
    // ranks start their bodies at different times under load.
    const Clock::rep left = Clock::now().time_since_epoch().count();
    EXPECT_TRUE(late_arrived.load()) << "rank " << c.rank() << " left the barrier early";
    EXPECT_GE(left, arrival.load()) << "rank " << c.rank();
    // And a second barrier with nobody late is quick.
    const auto t1 = Clock::now();
    ASSERT_TRUE(c.Barrier().ok());
    EXPECT_LT(MillisSince(t1), 2000);
  });
}

// A rank that never calls the collective: the others get Unavailable after
// about the timeout, and then the same error from every later call.
TEST_P(GlooTest, RankThatNeverCallsTimesOut) {
  const int n = GetParam();
  std::atomic<bool> done{false};
  RunRanks(
      n,
      [&](Communicator& c) {
        if (c.rank() == n - 1) {
          while (!done.load()) std::this_thread::sleep_for(milliseconds(5));
          return;
        }
        std::vector<float> v(1000, 1.0f);
        const auto t0 = Clock::now();
        Status s = c.AllReduce(v.data(), v.size(), ReduceOp::kSum);
        const double ms = MillisSince(t0);
        EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
        EXPECT_NE(s.message().find("gloo"), std::string::npos) << s.message();
        EXPECT_NE(s.message().find("allreduce"), std::string::npos) << s.message();
        EXPECT_GE(ms, 900);
        EXPECT_LT(ms, 10000);
        Status again = c.AllReduce(v.data(), v.size(), ReduceOp::kSum);
        EXPECT_EQ(again.code(), s.code());
        EXPECT_EQ(again.message(), s.message());
        EXPECT_EQ(c.Barrier().message(), s.message());
        if (c.rank() == 0) done = true;
      },
      milliseconds(1000));
}

INSTANTIATE_TEST_SUITE_P(Ranks, GlooTest, ::testing::Values(2, 3),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(GlooSingleRankTest, SizeOneNeedsNoPeers) {
  MemoryStore store;
  auto comm = Make(Backend::kGloo, &store, Options(0, 1, milliseconds(500)));
  ASSERT_TRUE(comm.ok()) << comm.status().ToString();
  Communicator& c = **comm;
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  EXPECT_STREQ(c.backend(), "gloo");
  EXPECT_EQ(c.memory(), Memory::kHost);
  std::vector<float> v = {1.5f, -2.0f, 3.0f};
  ASSERT_TRUE(c.AllReduce(v.data(), v.size(), ReduceOp::kSum).ok());
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f, 3.0f}));
  ASSERT_TRUE(c.AllReduce(v.data(), v.size(), ReduceOp::kMean).ok());
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f, 3.0f}));
  ASSERT_TRUE(c.Broadcast(v.data(), v.size(), 0).ok());
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f, 3.0f}));
  EXPECT_EQ(c.Broadcast(v.data(), v.size(), 1).code(), StatusCode::kInvalidArgument);
  std::vector<float> out(3, 0.0f);
  ASSERT_TRUE(c.AllGather(v.data(), v.size(), out.data()).ok());
  EXPECT_EQ(out, v);
  EXPECT_TRUE(c.Barrier().ok());
}

TEST(GlooJoinTest, BadRankOrSizeIsInvalidArgument) {
  MemoryStore store;
  for (auto [rank, size] :
       std::vector<std::pair<int, int>>{{0, 0}, {0, -1}, {-1, 2}, {2, 2}, {5, 3}}) {
    const auto t0 = Clock::now();
    auto comm = Make(Backend::kGloo, &store, Options(rank, size, milliseconds(2000)));
    ASSERT_FALSE(comm.ok()) << "rank " << rank << " of " << size;
    EXPECT_EQ(comm.status().code(), StatusCode::kInvalidArgument) << comm.status().ToString();
    EXPECT_LT(MillisSince(t0), 500) << "rank " << rank << " of " << size;
  }
}

// A stray TCP peer: listens on 127.0.0.1 below the ephemeral port range
// (so a Gloo pair told to reach it has the larger port and connects), and
// accepts connections without ever speaking Gloo, as a ZeroMQ socket that
// reached a Gloo port would.
class StrayListener {
 public:
  StrayListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (port_ = 20000; port_ < 30000; ++port_) {
      a.sin_port = htons(static_cast<uint16_t>(port_));
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) break;
    }
    EXPECT_EQ(::listen(fd_, 16), 0) << std::strerror(errno);
    thread_ = std::thread([this] {
      for (;;) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // shut down
        ++accepted;
        // Kept open until the end: one reset at once can make Debian's Gloo
        // throw from its device thread (getpeername), aborting the binary.
        std::lock_guard<std::mutex> l(mu_);
        open_.push_back(c);
      }
    });
  }
  ~StrayListener() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int c : open_) ::close(c);
  }
  int port() const { return port_; }
  std::atomic<int> accepted{0};

 private:
  int fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::vector<int> open_;  // accepted connections, closed at the end
  std::thread thread_;
};

// A store that sends the first attempt's connections from ranks 0 and 2 to
// rank 1 to a stray listener instead: rank 1's published pair addresses
// (Gloo's tcp::Address, a sockaddr_storage and a sequence number each) get
// the listener's port. Later attempts' keys pass untouched.
class MiswiringStore : public Store {
 public:
  explicit MiswiringStore(int port) : port_(port) {}
  Status Set(const std::string& key, const std::string& value) override {
    std::string v = value;
    if (key == "test/1" && v.size() % 2 == 0) {  // rank 1's two pair addresses
      for (size_t chunk = 0; chunk < 2; ++chunk) {
        sockaddr_in a;
        std::memcpy(&a, v.data() + chunk * v.size() / 2, sizeof a);
        if (a.sin_family != AF_INET) continue;
        a.sin_port = htons(static_cast<uint16_t>(port_));
        std::memcpy(v.data() + chunk * v.size() / 2, &a, sizeof a);
        ++miswired;
      }
    }
    return inner_.Set(key, v);
  }
  StatusOr<std::string> Get(const std::string& key, milliseconds timeout) override {
    return inner_.Get(key, timeout);
  }
  std::atomic<int> miswired{0};

 private:
  int port_;
  MemoryStore inner_;
};

// A first attempt whose pairs reached a stray peer fails on some rank; every
// rank joins again, and the communicator that results reduces correctly.
// In about 1 run in 30 no connection reaches the stray listener at all and
// the first attempt joins the real ranks (which side of a Gloo pair dials is
// not up to us): such a run shows nothing about strays and is run again, up
// to 5 times.
TEST(GlooJoinTest, PairsThatReachAStrayPeerAreFoundAndTheJoinIsRetried) {
  for (int trial = 0; trial < 5; ++trial) {
    StrayListener stray;
    MiswiringStore store(stray.port());
    std::vector<std::thread> threads;
    std::vector<Status> result(3);
    for (int r = 0; r < 3; ++r) {
      threads.emplace_back([&, r] {
        auto comm = Make(Backend::kGloo, &store, Options(r, 3, milliseconds(2000)));
        if (!comm.ok()) {
          result[r] = comm.status();
          return;
        }
        std::vector<float> v(5, float(r + 1));
        result[r] = (*comm)->AllReduce(v.data(), v.size(), ReduceOp::kSum);
        if (result[r].ok() && v != std::vector<float>(5, 6.0f)) result[r] = Internal("wrong sum");
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(store.miswired.load(), 2);
    if (stray.accepted.load() == 0 && !store.Get("test/retry1/joined/0", milliseconds(0)).ok()) {
      continue;  // the stray was never dialled: nothing to check this time
    }
    for (int r = 0; r < 3; ++r) EXPECT_TRUE(result[r].ok()) << r << ": " << result[r].ToString();
    // The first attempt's outcomes name a failure; the second one's are ok.
    bool some_failed = false;
    for (int r = 0; r < 3; ++r) {
      auto first = store.Get("test/joined/" + std::to_string(r), milliseconds(0));
      ASSERT_TRUE(first.ok()) << first.status().ToString();
      some_failed |= *first != "ok";
      auto second = store.Get("test/retry1/joined/" + std::to_string(r), milliseconds(0));
      ASSERT_TRUE(second.ok()) << second.status().ToString();
      EXPECT_EQ(*second, "ok");
    }
    EXPECT_TRUE(some_failed);
    return;
  }
  FAIL() << "in 5 runs no Gloo pair dialled the stray listener";
}

// A rank that never joins: the ones that did get Unavailable within about the
// timeout, naming the key they waited for.
TEST(GlooJoinTest, RankThatNeverJoinsIsUnavailable) {
  for (int missing : {0, 1}) {
    MemoryStore store;
    const auto t0 = Clock::now();
    auto comm = Make(Backend::kGloo, &store, Options(1 - missing, 2, milliseconds(500)));
    const double ms = MillisSince(t0);
    ASSERT_FALSE(comm.ok());
    EXPECT_EQ(comm.status().code(), StatusCode::kUnavailable) << comm.status().ToString();
    // The key is the communicator's prefix plus Gloo's own name for it.
    EXPECT_NE(comm.status().message().find("key 'test/"), std::string::npos)
        << comm.status().message();
    EXPECT_GE(ms, 450);
    EXPECT_LT(ms, 3000);
  }
}

// ---------------------------------------------------------------------------
// Gloo, ranks as processes that die or hang

// Joins rank `rank` of 2 through a FileStore in `dir`.
StatusOr<std::unique_ptr<Communicator>> JoinProcess(const std::string& dir, int rank,
                                                    milliseconds timeout) {
  FileStore store(dir);
  return Make(Backend::kGloo, &store, Options(rank, 2, timeout));
}

// Rank 0 of the process tests: joins, does one AllReduce, waits for a byte on
// `go_fd` if it is not -1, then reports the next (large) AllReduce, which is
// expected to fail: its status, how long it took, and how many of four later
// calls returned the same error. Then it destroys the communicator.
int RunSurvivor(int fd, const std::string& dir, milliseconds timeout, int go_fd = -1) {
  auto comm = JoinProcess(dir, 0, timeout);
  if (!comm.ok()) {
    Put(fd, "join", OneLine(comm.status().ToString()));
    return 2;
  }
  Communicator& c = **comm;
  std::vector<float> v(1024, 1.0f);
  Status first = c.AllReduce(v.data(), v.size(), ReduceOp::kSum);
  Put(fd, "first", first.ok() && v[0] == 2.0f ? "ok" : OneLine(first.ToString()));
  char go;
  if (go_fd >= 0 && ::read(go_fd, &go, 1) != 1) return 3;
  // More than a socket buffer holds.
  std::vector<float> big(size_t{1} << 21, 1.0f);
  const auto t0 = Clock::now();
  Status s = c.AllReduce(big.data(), big.size(), ReduceOp::kSum);
  Put(fd, "ms", std::to_string(int64_t(MillisSince(t0))));
  Put(fd, "code", StatusCodeName(s.code()));
  Put(fd, "message", OneLine(s.message()));
  int same = 0;
  same += c.AllReduce(v.data(), v.size(), ReduceOp::kMean).message() == s.message();
  same += c.Broadcast(v.data(), v.size(), 1).message() == s.message();
  std::vector<float> out(2 * v.size());
  same += c.AllGather(v.data(), v.size(), out.data()).message() == s.message();
  same += c.Barrier().message() == s.message();
  Put(fd, "same", std::to_string(same));
  comm->reset();
  Put(fd, "destroyed", "yes");
  return 0;
}

// Checks what RunSurvivor reported: it exited normally (was not killed, by
// SIGPIPE say), and its AllReduce failed with a sticky Unavailable naming gloo
// and allreduce after [min_ms, max_ms).
void ExpectSurvivorFailed(Child& survivor, int min_ms, int max_ms) {
  auto report = survivor.Report(milliseconds(20000));
  auto st = survivor.Wait(milliseconds(5000));
  ASSERT_TRUE(st.has_value()) << "rank 0 did not finish";
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0)
      << "rank 0 wait status " << *st
      << (WIFSIGNALED(*st) ? " (killed by " + std::string(strsignal(WTERMSIG(*st))) + ")"
                           : std::string())
      << "; join: " << report["join"];
  EXPECT_EQ(report["first"], "ok");
  EXPECT_EQ(report["code"], "unavailable") << report["message"];
  EXPECT_NE(report["message"].find("gloo"), std::string::npos) << report["message"];
  EXPECT_NE(report["message"].find("allreduce"), std::string::npos) << report["message"];
  ASSERT_FALSE(report["ms"].empty());
  const int ms = std::stoi(report["ms"]);
  EXPECT_GE(ms, min_ms) << report["message"];
  EXPECT_LT(ms, max_ms) << report["message"];
  EXPECT_EQ(report["same"], "4") << "later calls did not all return the same error";
  EXPECT_EQ(report["destroyed"], "yes");
}

// Rank 1 of the process tests: joins, does one AllReduce, then `then()`.
int RunPeer(const std::string& dir, milliseconds timeout, const std::function<void()>& then) {
  auto comm = JoinProcess(dir, 1, timeout);
  if (!comm.ok()) return 2;
  std::vector<float> v(1024, 1.0f);
  if (!(*comm)->AllReduce(v.data(), v.size(), ReduceOp::kSum).ok()) return 3;
  then();
  return 4;
}

void ExpectKilled(Child& child) {
  auto st = child.Wait(milliseconds(10000));
  ASSERT_TRUE(st.has_value()) << "rank 1 did not die";
  EXPECT_TRUE(WIFSIGNALED(*st) && WTERMSIG(*st) == SIGKILL) << "rank 1 wait status " << *st;
}

// Rank 1 dies (SIGKILL) while rank 0 is inside an AllReduce: rank 0 gets
// Unavailable long before the 10 s timeout, then the same error from every
// later call.
TEST(GlooProcessTest, PeerKilledDuringAllReduce) {
  TempDir dir;
  const milliseconds timeout(10000);
  Child victim([&](int) {
    return RunPeer(dir.path(), timeout, [] {
      std::this_thread::sleep_for(milliseconds(500));
      ::raise(SIGKILL);
    });
  });
  Child survivor([&](int fd) { return RunSurvivor(fd, dir.path(), timeout); });
  // Rank 0 was waiting in the AllReduce for most of rank 1's 500 ms.
  ExpectSurvivorFailed(survivor, 200, 5000);
  ExpectKilled(victim);
}

// Rank 1 is already dead when rank 0 starts its AllReduce (so rank 0 writes
// to a connection the peer reset): Unavailable at once.
TEST(GlooProcessTest, PeerDeadBeforeAllReduce) {
  TempDir dir;
  const milliseconds timeout(10000);
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  Child victim([&](int) {
    ::close(go[1]);
    return RunPeer(dir.path(), timeout, [] { ::raise(SIGKILL); });
  });
  Child survivor([&](int fd) {
    ::close(go[1]);
    return RunSurvivor(fd, dir.path(), timeout, go[0]);
  });
  ::close(go[0]);
  ExpectKilled(victim);
  std::this_thread::sleep_for(milliseconds(50));  // let the reset reach rank 0
  EXPECT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[1]);
  ExpectSurvivorFailed(survivor, 0, 5000);
}

// Rank 1 stops (SIGSTOP) after one AllReduce: rank 0's next AllReduce
// returns Unavailable after about the 1 s timeout instead of hanging.
TEST(GlooProcessTest, StoppedPeerTimesOut) {
  TempDir dir;
  const milliseconds timeout(1000);
  Child stopped([&](int) { return RunPeer(dir.path(), timeout, [] { ::raise(SIGSTOP); }); });
  Child survivor([&](int fd) { return RunSurvivor(fd, dir.path(), timeout); });
  EXPECT_TRUE(stopped.WaitStopped(milliseconds(10000))) << "rank 1 did not stop";
  ExpectSurvivorFailed(survivor, 900, 10000);
  // ~Child kills and reaps the stopped rank.
}

// ---------------------------------------------------------------------------
// Fusion

std::vector<std::tuple<size_t, size_t, size_t>> Describe(const std::vector<Bucket>& buckets) {
  std::vector<std::tuple<size_t, size_t, size_t>> out;
  for (const Bucket& b : buckets) out.emplace_back(b.begin, b.end, b.floats);
  return out;
}
using Buckets = std::vector<std::tuple<size_t, size_t, size_t>>;

TEST(FusionTest, MakeBucketsGroupsUpToTheThreshold) {
  // 32 bytes = 8 floats; a bucket may hold exactly the threshold.
  std::vector<size_t> counts = {4, 4, 4, 3, 1, 1};
  EXPECT_EQ(Describe(MakeBuckets(counts, 32)), (Buckets{{0, 2, 8}, {2, 5, 8}, {5, 6, 1}}));
  // One byte less and no two 4-float tensors fit together.
  EXPECT_EQ(Describe(MakeBuckets(counts, 31)),
            (Buckets{{0, 1, 4}, {1, 2, 4}, {2, 4, 7}, {4, 6, 2}}));
  // Everything fits.
  EXPECT_EQ(Describe(MakeBuckets(counts, kDefaultFusionThreshold)), (Buckets{{0, 6, 17}}));
}

TEST(FusionTest, MakeBucketsPutsAnOversizedTensorAlone) {
  std::vector<size_t> counts = {2, 2, 100, 2, 2};
  EXPECT_EQ(Describe(MakeBuckets(counts, 32)), (Buckets{{0, 2, 4}, {2, 3, 100}, {3, 5, 4}}));
  std::vector<size_t> first = {100, 1, 100, 100};
  EXPECT_EQ(Describe(MakeBuckets(first, 32)),
            (Buckets{{0, 1, 100}, {1, 2, 1}, {2, 3, 100}, {3, 4, 100}}));
  // A tensor of exactly the threshold is not oversized, but nothing more fits.
  std::vector<size_t> exact = {8, 1};
  EXPECT_EQ(Describe(MakeBuckets(exact, 32)), (Buckets{{0, 1, 8}, {1, 2, 1}}));
}

TEST(FusionTest, MakeBucketsThresholdZeroIsOneBucketPerTensor) {
  std::vector<size_t> counts = {3, 0, 0, 1, 5};
  EXPECT_EQ(Describe(MakeBuckets(counts, 0)),
            (Buckets{{0, 1, 3}, {1, 2, 0}, {2, 3, 0}, {3, 4, 1}, {4, 5, 5}}));
  EXPECT_TRUE(MakeBuckets(std::vector<size_t>{}, 0).empty());
  EXPECT_TRUE(MakeBuckets(std::vector<size_t>{}, 1024).empty());
}

// A communicator of one process that records its calls and doubles the data
// (as a sum over two equal ranks would).
class FakeCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  const char* backend() const override { return "fake"; }
  Memory memory() const override { return memory_; }
  Status AllReduce(float* data, size_t count, ReduceOp op) override {
    calls.emplace_back(data, count);
    if (fail_at >= 0 && int(calls.size()) > fail_at) return Unavailable("fake: peer gone");
    if (op == ReduceOp::kSum) {
      for (size_t i = 0; i < count; ++i) data[i] *= 2;
    }
    return Status::Ok();
  }
  Status Broadcast(float*, size_t, int) override { return Unimplemented("fake"); }
  Status AllGather(const float*, size_t, float*) override { return Unimplemented("fake"); }
  Status Barrier() override { return Unimplemented("fake"); }

  Memory memory_ = Memory::kHost;
  int fail_at = -1;
  std::vector<std::pair<float*, size_t>> calls;
};

TEST(FusionTest, FusedAllReducePacksBucketsAndReducesOversizedInPlace) {
  std::vector<std::vector<float>> data = {std::vector<float>(3), std::vector<float>(2),
                                          std::vector<float>(50), std::vector<float>(0),
                                          std::vector<float>(4)};
  std::vector<Tensor> tensors;
  float x = 1;
  for (auto& d : data) {
    for (float& f : d) f = x++;
    tensors.push_back(Tensor{d.data(), d.size()});
  }
  const auto before = data;
  FakeCommunicator comm;
  FusedAllReduce fused(&comm, 32);  // buckets {0,1}, {2}, {3,4}
  ASSERT_TRUE(fused.Run(tensors, ReduceOp::kSum).ok());
  ASSERT_EQ(comm.calls.size(), 3u);
  EXPECT_EQ(fused.calls(), 3u);
  EXPECT_EQ(comm.calls[0].second, 5u);
  EXPECT_EQ(comm.calls[1].first, data[2].data()) << "an oversized tensor is reduced in place";
  EXPECT_EQ(comm.calls[1].second, 50u);
  EXPECT_EQ(comm.calls[2].second, 4u);
  for (size_t t = 0; t < data.size(); ++t) {
    for (size_t i = 0; i < data[t].size(); ++i) {
      ASSERT_EQ(data[t][i], 2 * before[t][i]) << "tensor " << t << " element " << i;
    }
  }
  // calls() counts across runs; mean leaves equal ranks' data as it was.
  ASSERT_TRUE(fused.Run(tensors, ReduceOp::kMean).ok());
  EXPECT_EQ(fused.calls(), 6u);
  EXPECT_EQ(data[4][3], 2 * before[4][3]);
}

TEST(FusionTest, FusedAllReduceReturnsTheCommunicatorsError) {
  std::vector<float> a(3, 1.0f), b(100, 1.0f);
  std::vector<Tensor> tensors = {{a.data(), a.size()}, {b.data(), b.size()}};
  FakeCommunicator comm;
  comm.fail_at = 1;
  FusedAllReduce fused(&comm, 32);
  Status s = fused.Run(tensors, ReduceOp::kSum);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_EQ(s.message(), "fake: peer gone");
}

TEST(FusionTest, FusedAllReduceNeedsHostMemory) {
  std::vector<float> a(3, 1.0f);
  std::vector<Tensor> tensors = {{a.data(), a.size()}};
  FakeCommunicator comm;
  comm.memory_ = Memory::kCuda;
  FusedAllReduce fused(&comm);
  Status s = fused.Run(tensors, ReduceOp::kSum);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_EQ(fused.calls(), 0u);
  EXPECT_TRUE(comm.calls.empty());
}

// On two Gloo ranks, fused and per-tensor AllReduce give the same bits (a sum
// of two floats does not depend on the order), with one call per bucket.
TEST(FusionTest, FusedAllReduceMatchesPerTensorOnGloo) {
  const std::vector<size_t> sizes = {3, 1000, 17, 0, 5000, 8, 1};
  // 4 KiB = 1024 floats: buckets [0,4) of 1020, [4,5) of 5000, [5,7) of 9.
  struct Case {
    size_t threshold;
    uint64_t calls;
  };
  for (Case k : {Case{4096, 3}, Case{0, 6}, Case{kDefaultFusionThreshold, 1}}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean}) {
      RunRanks(2, [&](Communicator& c) {
        std::mt19937 gen(77 + c.rank());
        std::uniform_real_distribution<float> u(-1000.0f, 1000.0f);
        std::vector<std::vector<float>> fused_data, plain_data;
        for (size_t n : sizes) {
          std::vector<float> d(n);
          for (float& f : d) f = u(gen);
          fused_data.push_back(d);
          plain_data.push_back(d);
        }
        std::vector<Tensor> tensors;
        for (auto& d : fused_data) tensors.push_back(Tensor{d.data(), d.size()});
        FusedAllReduce fused(&c, k.threshold);
        ASSERT_TRUE(fused.Run(tensors, op).ok());
        EXPECT_EQ(fused.calls(), k.calls) << "threshold " << k.threshold;
        for (auto& d : plain_data) ASSERT_TRUE(c.AllReduce(d.data(), d.size(), op).ok());
        for (size_t t = 0; t < sizes.size(); ++t) {
          if (sizes[t] == 0) continue;  // memcmp takes no null pointers
          ASSERT_EQ(
              std::memcmp(fused_data[t].data(), plain_data[t].data(), sizes[t] * sizeof(float)), 0)
              << "tensor " << t << ", threshold " << k.threshold << ", rank " << c.rank();
        }
      });
    }
  }
}

}  // namespace
}  // namespace rigel::collectives
