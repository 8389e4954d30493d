// Multi-process tests: a peer in its own process (transport_test_peer) that is
// killed and restarted, and that runs with a cluster key.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/wire/messages.h"
#include "tests/transport/test_util.h"
#include "transport/auth/keyfile.h"
#include "transport/zmq/transport.h"

extern char** environ;

namespace rigel::transport {
namespace {

using testing::WaitFor;

const PeerId kServer{Role::kServer, 0};

std::string TempDir() {
  char tmpl[] = "/tmp/rigel-transport-test-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? d : "/tmp";
}

// A transport_test_peer process: started with Start, stopped by Kill or the destructor.
class PeerProcess {
 public:
  ~PeerProcess() { Kill(); }

  // Starts the peer with `args`; returns its address once it printed READY,
  // or "" if it did not within 10 s (its stderr is in `stderr_file`).
  std::string Start(const std::vector<std::string>& args, const std::string& stderr_file) {
    int out[2], in[2];
    EXPECT_EQ(::pipe(out), 0);
    EXPECT_EQ(::pipe(in), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0600);
    for (int fd : {in[0], in[1], out[0], out[1]}) posix_spawn_file_actions_addclose(&fa, fd);
    std::string bin = std::string(RIGEL_BIN_DIR) + "/transport_test_peer";
    std::vector<char*> argv{bin.data()};
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, bin.c_str(), &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    // Read "READY <address>\n" with a deadline.
    std::string line;
    pollfd p{out[0], POLLIN, 0};
    auto end = Clock::now() + Millis(10000);
    while (line.find('\n') == std::string::npos && Clock::now() < end) {
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, size_t(n));
    }
    ::close(out[0]);
    if (line.rfind("READY ", 0) != 0 || line.find('\n') == std::string::npos) return "";
    return line.substr(6, line.find('\n') - 6);
  }

  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
    ::close(stdin_);
    pid_ = -1;
  }

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
};

std::unique_ptr<Transport> Worker(std::optional<ClusterKey> key = std::nullopt, int rank = 0) {
  ZmqOptions o;
  o.self = PeerId{Role::kWorker, rank};
  o.key = std::move(key);
  o.linger = Millis(0);
  auto t = CreateZmqTransport(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

// The pid the peer answered with, or -1 on error.
int64_t Ping(Transport& t, Millis timeout) {
  auto r = t.Call(kServer, MakeAckMessage(), {.timeout = timeout});
  if (!r.ok()) return -1;
  return int64_t(r->Body<cluster::wire::Heartbeat>().getSeq());
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ProcessTest, ReconnectsAfterThePeerRestarts) {
  std::string dir = TempDir();
  PeerProcess peer;
  std::string address = peer.Start({"--listen", "tcp://127.0.0.1:*"}, dir + "/peer.log");
  ASSERT_FALSE(address.empty()) << ReadAll(dir + "/peer.log");
  auto worker = Worker();
  ASSERT_TRUE(worker->Connect(kServer, address).ok());
  int64_t first = Ping(*worker, Millis(5000));
  ASSERT_EQ(first, peer.pid());

  // A request in flight when the peer dies times out; it does not hang.
  peer.Kill();
  EXPECT_EQ(Ping(*worker, Millis(200)), -1);

  // Same address, new process: ZeroMQ reconnects by itself.
  std::string again = peer.Start({"--listen", address}, dir + "/peer.log");
  ASSERT_EQ(again, address);
  int64_t second = -1;
  ASSERT_TRUE(WaitFor([&] { return (second = Ping(*worker, Millis(300))) > 0; }, Millis(10000)));
  EXPECT_EQ(second, peer.pid());
  EXPECT_NE(second, first);
  EXPECT_EQ(worker->stats().dropped_total(), 0u);
}

TEST(ProcessTest, CurvePeerAdmitsKeyHoldersOnly) {
  std::string dir = TempDir();
  ClusterKey key = std::move(GenerateClusterKey()).value();
  std::string key_file = dir + "/cluster.key";
  ASSERT_TRUE(WriteKeyFile(key_file, key, false).ok());
  PeerProcess peer;
  std::string log = dir + "/peer.log";
  std::string address = peer.Start({"--listen", "tcp://127.0.0.1:*", "--key-file", key_file}, log);
  ASSERT_FALSE(address.empty()) << ReadAll(log);

  auto member = Worker(key, 0);
  ASSERT_TRUE(member->Connect(kServer, address).ok());
  EXPECT_EQ(Ping(*member, Millis(5000)), peer.pid());

  auto stranger = Worker(std::move(GenerateClusterKey()).value(), 1);
  ASSERT_TRUE(stranger->Connect(kServer, address).ok());
  EXPECT_EQ(Ping(*stranger, Millis(300)), -1);

  auto plain = Worker(std::nullopt, 2);
  ASSERT_TRUE(plain->Connect(kServer, address).ok());
  EXPECT_EQ(Ping(*plain, Millis(300)), -1);

  EXPECT_EQ(Ping(*member, Millis(5000)), peer.pid());  // still serving members
  peer.Kill();
  std::string text = ReadAll(log);
  EXPECT_NE(text.find("refused a connection"), std::string::npos) << text;
}

TEST(ProcessTest, PeerWithoutKeyRefusesToListenBeyondLoopback) {
  std::string dir = TempDir();
  PeerProcess peer;
  std::string address = peer.Start({"--listen", "tcp://0.0.0.0:*"}, dir + "/peer.log");
  EXPECT_TRUE(address.empty());
  peer.Kill();
  EXPECT_NE(ReadAll(dir + "/peer.log").find("loopback"), std::string::npos);
}

}  // namespace
}  // namespace rigel::transport
