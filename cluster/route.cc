#include "cluster/route.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rigel::cluster {

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

StatusOr<std::string> LocalAddressTowards(const std::string& host, int port) {
  if (IsLoopbackHost(host)) return std::string("127.0.0.1");
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    return Unavailable("the scheduler's host '" + host + "' does not resolve: " + gai_strerror(rc));
  }
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    freeaddrinfo(res);
    return Unavailable(std::string("socket: ") + std::strerror(errno));
  }
  // connect() on a UDP socket only consults the routing table.
  int rc = connect(fd, res->ai_addr, res->ai_addrlen);
  int err = errno;
  freeaddrinfo(res);
  sockaddr_in local{};
  socklen_t len = sizeof local;
  if (rc == 0) {
    rc = getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
    err = errno;
  }
  close(fd);
  if (rc != 0) {
    return Unavailable("no route to the scheduler's host '" + host + "': " + std::strerror(err));
  }
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &local.sin_addr, buf, sizeof buf);
  return std::string(buf);
}

StatusOr<std::string> ListenTowards(const std::string& scheduler) {
  const std::string tcp = "tcp://";
  if (scheduler.rfind(tcp, 0) != 0) return std::string("tcp://127.0.0.1:*");
  std::string host = scheduler.substr(tcp.size());
  int port = 0;
  if (size_t colon = host.rfind(':'); colon != std::string::npos) {
    port = std::atoi(host.c_str() + colon + 1);
    host = host.substr(0, colon);
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  RIGEL_ASSIGN_OR_RETURN(std::string ip, LocalAddressTowards(host, port > 0 ? port : 9));
  return "tcp://" + ip + ":*";
}

}  // namespace rigel::cluster
