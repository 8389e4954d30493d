// Joining the workers' communicator for the allreduce parameters and the
// relaxed parameters' hot rows (worker/dense_sync.h; the strategies are
// worker/sync/allreduce.cc and worker/sync/cached_rows.cc).
#include "collectives/communicator.h"
#include "transport/endpoint.h"
#include "worker/runner.h"

namespace rigel::worker {

using analysis::Strategy;

Status Runner::StartCollectives() {
  bool any = false;
  for (size_t l = 0; l < plan_.loops.size(); ++l) {
    for (const analysis::ParamPlan& pp : plan_.loops[l].params) {
      any |= !pp.is_accum && analysis::Mechanism(pp) == Strategy::kAllreduce;
    }
    // Hot rows of relaxed parameters are merged by the collectives too.
    const analysis::PlanInput in = PlanFor(static_cast<int>(l));
    for (const analysis::PlanParam& pp : in.loop_params) {
      any |= pp.cached && opts_.job.hot_rows && opts_.workers > 1;
    }
  }
  if (!any) return Status::Ok();
  namespace coll = collectives;
  const bool cuda = opts_.job.device == "cuda";
  if (cuda) {
    if (Status s = coll::Available(coll::Backend::kNccl); !s.ok()) {
      return Status(s.code(), "--device cuda: " + s.message());
    }
  } else if (opts_.job.device != "cpu") {
    return InvalidArgument("device '" + opts_.job.device + "': expected cpu or cuda");
  }
  if (!opts_.store) {
    return FailedPrecondition(
        "the program has allreduce parameters or hot rows but the worker has no "
        "rendezvous store for its collectives");
  }
  coll::CommunicatorOptions co;
  co.rank = opts_.rank;
  co.size = opts_.workers;
  co.prefix = "allreduce";
  co.timeout = opts_.collectives_timeout;
  co.host = opts_.collectives_host;
  if (co.host.empty()) {
    // The host this worker listens on (tcp:// or ucx://); addresses
    // without a host (ipc, inproc) are local.
    co.host = "127.0.0.1";
    auto e = transport::ParseEndpoint(transport_->address());
    if (e.ok() && e->has_host() && !e->HasWildcardHost()) co.host = e->host;
  }
  int cuda_device = -1;
  if (cuda) {
    RIGEL_ASSIGN_OR_RETURN(cuda_device, coll::CudaDeviceFor(co));
    co.device = cuda_device;
  }
  const coll::Backend backend = cuda                             ? coll::Backend::kNccl
                                : opts_.job.collectives == "mpi" ? coll::Backend::kMpi
                                                                 : coll::Backend::kGloo;
  auto comm = coll::Make(backend, opts_.store, co);
  if (!comm.ok()) {
    return Status(comm.status().code(),
                  "worker " + std::to_string(opts_.rank) +
                      ": joining the other workers for the allreduce parameters failed: " +
                      comm.status().message());
  }
  if (opts_.log) {
    // One write: under mpirun the ranks' stderr streams are merged, and a
    // line written in pieces comes out interleaved with another rank's.
    *opts_.log << ("worker " + std::to_string(opts_.rank) + ": allreduce parameters summed over " +
                   (*comm)->backend() + " (" + std::to_string((*comm)->size()) + " workers)\n");
  }
  dense_ = std::make_unique<DenseSync>(std::move(comm).value(), coll::kDefaultFusionThreshold,
                                       cuda_device);
  return Status::Ok();
}

}  // namespace rigel::worker
