// The command-line flags every cluster member binary (rigel-server,
// rigel-worker) shares, and the transport they describe. Used only by the
// binaries' thin mains.
#ifndef RIGEL_CLUSTER_MEMBER_FLAGS_H_
#define RIGEL_CLUSTER_MEMBER_FLAGS_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>

#include "cluster/member.h"
#include "cluster/membership.h"
#include "cluster/route.h"
#include "transport/create.h"
#include "transport/endpoint.h"

namespace rigel::cluster {

struct MemberFlags {
  std::string scheduler;
  std::string transport;  // empty: the backend the scheduler's address is of
  std::string listen;  // empty: the address that routes to the scheduler
  bool insecure_plain = false;
  std::string key_file;
  int rank = 0;
  int heartbeat_ms = 500;
  double heartbeat_timeout_s = kDefaultHeartbeatTimeoutS;
  double register_timeout_s = 30;
  std::string job_key, job_name;  // what rigel-node was started on

  MemberOptions Options() const {
    MemberOptions o;
    o.scheduler = scheduler;
    o.heartbeat = std::chrono::milliseconds(heartbeat_ms);
    o.heartbeat_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(heartbeat_timeout_s * 1000));
    o.join_timeout = std::chrono::milliseconds(static_cast<int64_t>(register_timeout_s * 1000));
    o.identity.key = job_key;
    o.identity.name = job_name;
    return o;
  }
};

// Adds --scheduler, --transport, --rank (0..max_rank), --listen, --insecure-plain,
// --key-file, --heartbeat-ms, --heartbeat-timeout-s, --register-timeout-s,
// --job-key, --job-name.
inline void AddMemberFlags(CLI::App* app, MemberFlags* f, int max_rank) {
  app->add_option("--scheduler", f->scheduler, "the scheduler's address")->required();
  app->add_option("--transport", f->transport,
                  "zmq or ucx (default: the one the scheduler's address is of: tcp:// zmq, "
                  "ucx:// ucx)");
  app->add_option("--rank", f->rank, "this process's rank in its role")
      ->required()
      ->check(CLI::Range(0, max_rank));
  app->add_option("--listen", f->listen,
                  "address to listen on (default: this host's address that routes to the "
                  "scheduler, port chosen by the system)");
  app->add_flag("--insecure-plain", f->insecure_plain,
                "without a key, listen and connect beyond loopback anyway (no authentication "
                "nor encryption)");
  app->add_option("--key-file", f->key_file, "cluster key file (rigel keygen)");
  app->add_option("--heartbeat-ms", f->heartbeat_ms, "heartbeat interval")
      ->check(CLI::Range(10, 600000))
      ->capture_default_str();
  app->add_option("--heartbeat-timeout-s", f->heartbeat_timeout_s,
                  "stop when nothing came from the scheduler for this many seconds")
      ->check(CLI::Range(0.05, 86400.0))
      ->capture_default_str();
  app->add_option("--register-timeout-s", f->register_timeout_s,
                  "give up when the scheduler has not answered within this many seconds")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  app->add_option("--job-key", f->job_key,
                  "the job key of the program this process was started on (rigel-node)");
  app->add_option("--job-name", f->job_name, "that program's path, for messages");
}

// The transport (transport::Create) of a member of `role` with these flags.
// Without --listen it listens on the address that routes to the scheduler
// (cluster/route.h), so that a member on another host never advertises a
// loopback address, and says so on `log`. Its backend is the scheduler's
// (the scheme of --scheduler); a --transport or --listen of the other one is
// InvalidArgument naming both, since such a member could not reach the job.
inline StatusOr<std::unique_ptr<transport::Transport>> MemberTransport(transport::Role role,
                                                                       const MemberFlags& f,
                                                                       std::ostream& log) {
  transport::TransportOptions to;
  to.self = {role, f.rank};
  RIGEL_ASSIGN_OR_RETURN(to.backend, transport::BackendOfAddress(f.scheduler));
  if (!f.transport.empty()) {
    RIGEL_RETURN_IF_ERROR(transport::CheckBackendName(f.transport));
    if (f.transport != to.backend) {
      return InvalidArgument("--transport " + f.transport + ": the scheduler at " + f.scheduler +
                             " speaks " + to.backend + "; every process of a job uses one");
    }
  }
  if (!f.listen.empty()) {
    RIGEL_ASSIGN_OR_RETURN(std::string listen_backend, transport::BackendOfAddress(f.listen));
    if (listen_backend != to.backend) {
      return InvalidArgument("--listen " + f.listen + " is a " + listen_backend +
                             " address, but the scheduler at " + f.scheduler + " speaks " +
                             to.backend);
    }
  }
  to.listen = f.listen;
  if (to.listen.empty()) {
    RIGEL_ASSIGN_OR_RETURN(to.listen, ListenTowards(f.scheduler));
  }
  to.key_file = f.key_file;
  to.insecure_plain = f.insecure_plain;
  RIGEL_ASSIGN_OR_RETURN(auto t, transport::Create(to));
  log << transport::RoleName(role) << " " << f.rank << ": listening at " << t->address()
      << (f.listen.empty() ? " (the address that routes to the scheduler at " + f.scheduler + ")"
                           : std::string())
      << "\n";
  return t;
}

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_MEMBER_FLAGS_H_
