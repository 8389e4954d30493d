#include "tests/harness/inproc_cluster.h"

#include <utility>

#include "common/check.h"

namespace rigel::testing {

using transport::PeerId;
using transport::Role;

ServerNode::ServerNode(transport::Transport* endpoint, int rank)
    : endpoint_(endpoint), rank_(rank) {
  endpoint_->SetHandler([this](transport::InMessage m) { Handle(m); });
}

cluster::Member& ServerNode::BecomeMember(const cluster::MemberOptions& options) {
  RIGEL_CHECK(member_ == nullptr);
  member_ = std::make_unique<cluster::Member>(endpoint_, options);
  member_seen_.store(member_.get());
  return *member_;
}

Status ServerNode::Serve(const cluster::ClusterSetup& setup) {
  RIGEL_CHECK(service_ == nullptr);
  RIGEL_ASSIGN_OR_RETURN(service_, ps::PsService::Create(endpoint_, rank_, setup));
  service_seen_.store(service_.get());
  return Status::Ok();
}

ps::PsService& ServerNode::service() {
  RIGEL_CHECK(service_ != nullptr);
  return *service_;
}

void ServerNode::Handle(const transport::InMessage& m) {
  if (cluster::Member* member = member_seen_.load(); member && member->Handle(m)) return;
  if (ps::PsService* service = service_seen_.load(); service && service->Handle(m)) return;
  // As rigel-server answers before its shards exist: the caller retries.
  if (m.is_request()) (void)endpoint_->RespondError(m, Unavailable("not ready"));
}

InProcCluster::InProcCluster(ClusterOptions options)
    : options_(std::move(options)), net_(transport::LoopbackNetwork::Create(options_.loopback)) {}

InProcCluster::~InProcCluster() { Close(); }

StatusOr<transport::Transport*> InProcCluster::Join(const PeerId& self) {
  Endpoint e;
  e.id = self;
  RIGEL_ASSIGN_OR_RETURN(e.owned, net_->Join(self));
  if (auto it = options_.faults.find(self); it != options_.faults.end()) {
    RIGEL_ASSIGN_OR_RETURN(
        auto wrapped, transport::FaultInjectingTransport::Create(std::move(e.owned), it->second));
    e.faults = wrapped.get();
    e.owned = std::move(wrapped);
  }
  transport::Transport* t = e.owned.get();
  MutexLock lock(&mu_);
  endpoints_.push_back(std::move(e));
  return t;
}

StatusOr<ServerNode*> InProcCluster::JoinServer(int rank) {
  RIGEL_ASSIGN_OR_RETURN(transport::Transport * t, Join(PeerId{Role::kServer, rank}));
  auto node = std::make_unique<ServerNode>(t, rank);
  ServerNode* raw = node.get();
  MutexLock lock(&mu_);
  servers_[rank] = std::move(node);
  return raw;
}

Status InProcCluster::StartServers(const cluster::ClusterSetup& setup) {
  for (int s = 0; s < setup.servers; ++s) {
    RIGEL_ASSIGN_OR_RETURN(ServerNode * node, JoinServer(s));
    RIGEL_RETURN_IF_ERROR(node->Serve(setup));
  }
  return Status::Ok();
}

void InProcCluster::Spawn(std::function<void()> body) {
  MutexLock lock(&mu_);
  threads_.emplace_back(std::move(body));
}

void InProcCluster::JoinSpawned() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

void InProcCluster::Close() {
  std::vector<transport::Transport*> open;
  {
    MutexLock lock(&mu_);
    for (const Endpoint& e : endpoints_) open.push_back(e.owned.get());
  }
  // Outside the lock: a closing endpoint waits for its receive thread, whose
  // handler may be asking this cluster for something.
  for (auto it = open.rbegin(); it != open.rend(); ++it) (*it)->Close();
  JoinSpawned();
  // Endpoints a spawned thread joined while the others closed.
  std::vector<transport::Transport*> late;
  {
    MutexLock lock(&mu_);
    for (size_t k = open.size(); k < endpoints_.size(); ++k) {
      late.push_back(endpoints_[k].owned.get());
    }
  }
  for (transport::Transport* t : late) t->Close();
}

int InProcCluster::servers() const {
  MutexLock lock(&mu_);
  return static_cast<int>(servers_.size());
}

ServerNode& InProcCluster::server(int rank) {
  MutexLock lock(&mu_);
  auto it = servers_.find(rank);
  RIGEL_CHECK(it != servers_.end());
  return *it->second;
}

transport::FaultInjectingTransport* InProcCluster::faults(const PeerId& peer) {
  MutexLock lock(&mu_);
  for (const Endpoint& e : endpoints_) {
    if (e.id == peer) return e.faults;
  }
  return nullptr;
}

}  // namespace rigel::testing
