// transport_test_peer: a minimal Rigel endpoint in its own process, started by
// tests/transport/process_test.cc. It listens, prints "READY <address>" on
// stdout, answers every request with a heartbeat whose seq is its pid (so the
// test can tell restarts apart), and exits when stdin closes.
//
//   transport_test_peer --listen ADDRESS [--key-file FILE] [--role-rank N]
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "cluster/wire/messages.h"
#include "transport/zmq/transport.h"

int main(int argc, char** argv) {
  using namespace rigel::transport;
  ZmqOptions o;
  o.self = PeerId{Role::kServer, 0};
  o.linger = Millis(0);
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--listen") {
      o.listen = argv[i + 1];
    } else if (flag == "--key-file") {
      o.key_file = argv[i + 1];
    } else if (flag == "--rank") {
      o.self.rank = std::stoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "transport_test_peer: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  auto t = CreateZmqTransport(o);
  if (!t.ok()) {
    std::fprintf(stderr, "transport_test_peer: %s\n", t.status().ToString().c_str());
    return 1;
  }
  Transport& transport = **t;
  transport.SetHandler([&transport](InMessage m) {
    if (!m.is_request()) return;
    OutMessage r;
    r.InitBody<rigel::cluster::wire::Heartbeat>().setSeq(static_cast<uint64_t>(::getpid()));
    (void)transport.Respond(m, std::move(r));
  });
  std::printf("READY %s\n", transport.address().c_str());
  std::fflush(stdout);
  char buf[64];
  while (::read(0, buf, sizeof buf) > 0) {
  }
  return 0;
}
