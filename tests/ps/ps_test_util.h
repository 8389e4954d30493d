// An in-process parameter-server cluster for the ps tests: S servers and W
// worker clients, each on its own ZeroMQ endpoint, and a setup with a
// hash-sharded embedding and a range-sharded 1-D parameter.
#ifndef RIGEL_TESTS_PS_PS_TEST_UTIL_H_
#define RIGEL_TESTS_PS_PS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ps/client.h"
#include "ps/service.h"
#include "transport/fault_injecting_transport.h"
#include "transport/zmq/transport.h"

namespace rigel::ps::testing {

using transport::PeerId;
using transport::Role;

inline cluster::ClusterSetup TestSetup(int servers, int workers, int staleness) {
  cluster::ClusterSetup s;
  s.servers = servers;
  s.workers = workers;
  s.options.staleness = staleness;
  cluster::ParamSpec emb;  // hash-sharded embedding
  emb.decl.name = "emb";
  emb.decl.width = 8;
  emb.decl.init = ir::ParamDecl::kNormal;
  emb.decl.b = 0.1;
  emb.decl.seed = 7;
  emb.rows = 100000;
  emb.hash = true;
  cluster::ParamSpec bias;  // range-sharded 1-D
  bias.decl.name = "bias";
  bias.decl.init = ir::ParamDecl::kUniform;
  bias.decl.a = -1;
  bias.decl.b = 1;
  bias.decl.seed = 3;
  bias.rows = 1001;
  s.params = {emb, bias};
  return s;
}

// S servers and W workers in this process, each with its own ZeroMQ endpoint.
class Cluster {
 public:
  Cluster(const cluster::ClusterSetup& setup,
          std::vector<transport::FaultOptions> worker_faults = {},
          transport::Millis timeout = transport::Millis(20000)) {
    std::vector<std::string> addresses;
    for (int s = 0; s < setup.servers; ++s) {
      transport::ZmqOptions o;
      o.self = PeerId{Role::kServer, s};
      o.linger = transport::Millis(0);
      auto t = transport::CreateZmqTransport(o);
      EXPECT_TRUE(t.ok()) << t.status().message();
      auto svc = PsService::Create(t->get(), s, setup);
      EXPECT_TRUE(svc.ok()) << svc.status().message();
      PsService* raw = svc->get();
      (*t)->SetHandler([raw](transport::InMessage m) { raw->Handle(m); });
      addresses.push_back((*t)->address());
      server_transports.push_back(std::move(t).value());
      services.push_back(std::move(svc).value());
    }
    for (int w = 0; w < setup.workers; ++w) {
      transport::ZmqOptions o;
      o.self = PeerId{Role::kWorker, w};
      o.linger = transport::Millis(0);
      auto t = transport::CreateZmqTransport(o);
      EXPECT_TRUE(t.ok());
      std::unique_ptr<transport::Transport> tr = std::move(t).value();
      if (w < static_cast<int>(worker_faults.size())) {
        auto f = transport::FaultInjectingTransport::Create(std::move(tr), worker_faults[w]);
        EXPECT_TRUE(f.ok());
        tr = std::move(f).value();
      }
      for (int s = 0; s < setup.servers; ++s) {
        EXPECT_TRUE(tr->Connect(PeerId{Role::kServer, s}, addresses[s]).ok());
      }
      auto map = setup.MakeShardMap();
      EXPECT_TRUE(map.ok());
      ps::PsClientOptions co;
      co.staleness = setup.options.staleness;
      co.call.timeout = timeout;
      clients.push_back(std::make_unique<ps::PsClient>(tr.get(), std::move(map).value(), co));
      worker_transports.push_back(std::move(tr));
    }
  }
  ~Cluster() {
    clients.clear();
    for (auto& t : worker_transports) t->Close();
    for (auto& t : server_transports) t->Close();
  }

  std::vector<std::unique_ptr<transport::Transport>> server_transports, worker_transports;
  std::vector<std::unique_ptr<PsService>> services;
  std::vector<std::unique_ptr<ps::PsClient>> clients;
};

}  // namespace rigel::ps::testing

#endif  // RIGEL_TESTS_PS_PS_TEST_UTIL_H_
