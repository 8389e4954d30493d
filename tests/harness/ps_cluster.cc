#include "tests/harness/ps_cluster.h"

#include <utility>

namespace rigel::testing {

using transport::PeerId;
using transport::Role;

cluster::ClusterSetup TestSetup(int servers, int workers, int staleness) {
  cluster::ClusterSetup s;
  s.servers = servers;
  s.workers = workers;
  s.options.staleness = staleness;
  cluster::ParamSpec emb;
  emb.decl.name = "emb";
  emb.decl.width = 8;
  emb.decl.init = ir::ParamDecl::kNormal;
  emb.decl.b = 0.1;
  emb.decl.seed = 7;
  emb.rows = 100000;
  emb.hash = true;
  cluster::ParamSpec bias;
  bias.decl.name = "bias";
  bias.decl.init = ir::ParamDecl::kUniform;
  bias.decl.a = -1;
  bias.decl.b = 1;
  bias.decl.seed = 3;
  bias.rows = 1001;
  s.params = {emb, bias};
  return s;
}

StatusOr<std::unique_ptr<PsCluster>> PsCluster::Start(const cluster::ClusterSetup& setup,
                                                      PsClusterOptions options) {
  std::unique_ptr<PsCluster> c(new PsCluster(std::move(options.cluster)));
  RIGEL_RETURN_IF_ERROR(c->base_.StartServers(setup));
  for (int w = 0; w < setup.workers; ++w) {
    RIGEL_ASSIGN_OR_RETURN(transport::Transport * t, c->base_.Join(PeerId{Role::kWorker, w}));
    RIGEL_ASSIGN_OR_RETURN(cluster::ShardMap map, setup.MakeShardMap());
    ps::PsClientOptions co;
    co.staleness = setup.options.staleness;
    co.call.timeout = options.call_timeout;
    c->workers_.push_back(t);
    c->clients_.push_back(std::make_unique<ps::PsClient>(t, std::move(map), co));
  }
  return c;
}

PsCluster::~PsCluster() {
  // Endpoints first: a call still pending fails into a live client, whose
  // callbacks would otherwise outlive it.
  base_.Close();
  clients_.clear();
}

}  // namespace rigel::testing
