// The base of every in-process cluster in the tests: one
// transport::LoopbackNetwork, the endpoints its members join, parameter
// servers (a ps::PsService behind each server's handler, and a
// cluster::Member in front of it when the server takes part in the control
// plane), and threads that stand in for member processes (gloo's
// BaseTest::spawn). The layers on top make the clusters the tests use, each
// in a file of its own: tests/harness/ps_cluster.h (servers and PsClients),
// tests/harness/runner_cluster.h (servers and worker::Runner workers driven
// by a serial executor) and tests/harness/job_cluster.h (the scheduler's
// Coordinator and Driver, servers and worker::RunJob workers as threads).
//
// Faults: a member named in ClusterOptions::faults joins through a
// transport::FaultInjectingTransport wrapping its loopback endpoint, with
// those options; faults() hands it back for Cut/Heal. Everything else about
// the endpoints is LoopbackTransport's (its header says what it shares with
// ZeroMQ: encoding, back-pressure, per-peer order, a receive thread each).
//
// Ownership: the cluster owns every endpoint, server and spawned thread.
// Close() (and the destructor) closes the endpoints, the last joined first,
// so that no receive thread runs a handler afterwards, then joins the
// spawned threads; the servers' services and members are destroyed after
// that. A layer that owns objects its handlers reach (clients, runners)
// calls Close() before destroying them.
//
// Errors: Join as LoopbackNetwork::Join (an identity already taken) or
// FaultInjectingTransport::Create (fault options out of range);
// ServerNode::Serve as ps::PsService::Create.
//
// Thread-safety: Join, JoinServer, Spawn and the accessors may be called from
// any thread (spawned ones included); Close, JoinSpawned and the destructor
// from the test's thread.
#ifndef RIGEL_TESTS_HARNESS_INPROC_CLUSTER_H_
#define RIGEL_TESTS_HARNESS_INPROC_CLUSTER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "cluster/member.h"
#include "cluster/setup.h"
#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "ps/service.h"
#include "transport/fault_injecting_transport.h"
#include "transport/loopback_transport.h"

namespace rigel::testing {

struct ClusterOptions {
  transport::LoopbackOptions loopback;
  // Members that join through a FaultInjectingTransport, and its options
  // (default options wrap without misbehaving).
  std::map<transport::PeerId, transport::FaultOptions> faults;
};

// A parameter server as rigel-server runs one, on an endpoint of the
// cluster: each message goes to its Member first (once it has one), then to
// its PsService (once Serve made it); a request neither takes is answered
// Unavailable("not ready"). BecomeMember and Serve are called once each, by
// the one thread that drives this server; the handler runs on the endpoint's
// receive thread.
class ServerNode {
 public:
  // Sets `endpoint`'s handler; `endpoint` must outlive this node's use.
  ServerNode(transport::Transport* endpoint, int rank);
  ServerNode(const ServerNode&) = delete;
  ServerNode& operator=(const ServerNode&) = delete;

  // Makes this server a member of the scheduler's control plane; call it
  // before Member::Join so that the replies find it.
  cluster::Member& BecomeMember(const cluster::MemberOptions& options);
  // Makes the PsService holding this server's rows of `setup`.
  Status Serve(const cluster::ClusterSetup& setup);

  int rank() const { return rank_; }
  transport::Transport& endpoint() { return *endpoint_; }
  // The service Serve made; checked (RIGEL_CHECK) to exist.
  ps::PsService& service();

 private:
  void Handle(const transport::InMessage& m);

  transport::Transport* const endpoint_;
  const int rank_;
  std::unique_ptr<cluster::Member> member_;
  std::unique_ptr<ps::PsService> service_;
  // What the receive thread sees of the two above.
  std::atomic<cluster::Member*> member_seen_{nullptr};
  std::atomic<ps::PsService*> service_seen_{nullptr};
};

class InProcCluster {
 public:
  explicit InProcCluster(ClusterOptions options = {});
  InProcCluster(const InProcCluster&) = delete;
  InProcCluster& operator=(const InProcCluster&) = delete;
  ~InProcCluster();

  // A new endpoint `self` (wrapped when options.faults names it), owned by
  // the cluster; the caller sets its handler.
  StatusOr<transport::Transport*> Join(const transport::PeerId& self) RIGEL_EXCLUDES(mu_);
  // Joins server `rank` and makes its node (see ServerNode).
  StatusOr<ServerNode*> JoinServer(int rank) RIGEL_EXCLUDES(mu_);
  // Servers 0 .. setup.servers - 1, each serving its rows of `setup`.
  Status StartServers(const cluster::ClusterSetup& setup);

  // Runs `body` on a thread of its own, joined by JoinSpawned or Close.
  void Spawn(std::function<void()> body) RIGEL_EXCLUDES(mu_);
  void JoinSpawned() RIGEL_EXCLUDES(mu_);
  // Closes every endpoint (the last joined first), then joins the spawned
  // threads. Idempotent.
  void Close() RIGEL_EXCLUDES(mu_);

  int servers() const RIGEL_EXCLUDES(mu_);
  // Server `rank`'s node; checked to have been joined.
  ServerNode& server(int rank) RIGEL_EXCLUDES(mu_);
  // The fault injector `peer` joined through, or null.
  transport::FaultInjectingTransport* faults(const transport::PeerId& peer) RIGEL_EXCLUDES(mu_);
  transport::LoopbackNetwork& network() { return *net_; }

 private:
  struct Endpoint {
    transport::PeerId id;
    std::unique_ptr<transport::Transport> owned;
    transport::FaultInjectingTransport* faults = nullptr;  // `owned`, when wrapped
  };

  const ClusterOptions options_;
  const std::shared_ptr<transport::LoopbackNetwork> net_;
  mutable Mutex mu_;
  // Declared before servers_: a node's handler runs on an endpoint's thread,
  // so endpoints are closed (Close) before nodes go, and outlive them.
  std::vector<Endpoint> endpoints_ RIGEL_GUARDED_BY(mu_);
  std::map<int, std::unique_ptr<ServerNode>> servers_ RIGEL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ RIGEL_GUARDED_BY(mu_);
};

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_HARNESS_INPROC_CLUSTER_H_
