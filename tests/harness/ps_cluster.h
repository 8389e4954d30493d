// Parameter servers and their clients in this process, for the ps tests: S
// servers (ps::PsService, tests/harness/inproc_cluster.h's ServerNode) and W
// workers, each a loopback endpoint with a ps::PsClient on it; and TestSetup,
// the setup most of those tests share.
//
// Ownership: the cluster owns its base InProcCluster (base()) and the
// clients on the workers' endpoints. A test may make more clients on those
// endpoints (they must go before the cluster does) and more endpoints with
// base().Join (the base owns those).
// Errors: Start fails as InProcCluster::Join, ps::PsService::Create or
// cluster::ClusterSetup::MakeShardMap fail.
// Thread-safety: a client or worker endpoint may be used from any thread, as
// PsClient and Transport say; Start and the destructor from the test's.
#ifndef RIGEL_TESTS_HARNESS_PS_CLUSTER_H_
#define RIGEL_TESTS_HARNESS_PS_CLUSTER_H_

#include <memory>
#include <vector>

#include "cluster/setup.h"
#include "common/status.h"
#include "ps/client.h"
#include "ps/service.h"
#include "tests/harness/inproc_cluster.h"

namespace rigel::testing {

// S servers and W workers with staleness `staleness`, holding a
// hash-sharded embedding "emb" (100000 rows of width 8, normal with mean 0
// and deviation 0.1, seed 7) and a range-sharded 1-D "bias" (1001 rows,
// uniform in [-1, 1], seed 3).
cluster::ClusterSetup TestSetup(int servers, int workers, int staleness);

struct PsClusterOptions {
  // Faults by member, e.g. {PeerId{Role::kWorker, 1}, slow}.
  ClusterOptions cluster;
  // Each client's CallOptions::timeout.
  transport::Millis call_timeout{20000};
};

class PsCluster {
 public:
  // Servers 0 .. setup.servers - 1 and workers 0 .. setup.workers - 1, each
  // worker's client with setup's staleness.
  static StatusOr<std::unique_ptr<PsCluster>> Start(const cluster::ClusterSetup& setup,
                                                    PsClusterOptions options = {});
  ~PsCluster();

  int servers() const { return base_.servers(); }
  ps::PsService& service(int s) { return base_.server(s).service(); }
  ps::PsClient& client(int w) { return *clients_.at(w); }
  // Worker w's endpoint, for clients and exchanges the test makes itself.
  transport::Transport* worker(int w) { return workers_.at(w); }
  InProcCluster& base() { return base_; }

 private:
  explicit PsCluster(ClusterOptions options) : base_(std::move(options)) {}

  InProcCluster base_;
  std::vector<transport::Transport*> workers_;
  std::vector<std::unique_ptr<ps::PsClient>> clients_;
};

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_HARNESS_PS_CLUSTER_H_
