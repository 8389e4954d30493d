#include "cluster/route.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "transport/create.h"
#include "transport/endpoint.h"

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
  RIGEL_ASSIGN_OR_RETURN(transport::Endpoint e, transport::ParseEndpoint(scheduler));
  if (!e.has_host()) return transport::DefaultListen(e.backend());
  const int port = e.port_number();
  RIGEL_ASSIGN_OR_RETURN(std::string ip, LocalAddressTowards(e.host, port > 0 ? port : 9));
  return transport::HostAddress(e.backend(), ip, "*");
}

}  // namespace rigel::cluster
