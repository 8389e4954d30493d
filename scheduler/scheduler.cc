#include "scheduler/scheduler.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

#include "cluster/job_identity.h"
#include "collectives/world.h"
#include "common/file.h"
#include "common/mutex.h"
#include "frontend/compile.h"
#include "scheduler/coordinator.h"
#include "transport/create.h"
#include "transport/endpoint.h"

namespace rigel::scheduler {

namespace {

// The running coordinator, for StopScheduler (called from a signal thread).
Mutex g_mu;
Coordinator* g_coordinator RIGEL_GUARDED_BY(g_mu) = nullptr;

// Why a step before the job failed, and the exit status it calls for.
struct Failure {
  int code;
  std::string message;
};

// Compiles and plans the program (driver.program). A compile error's message
// is already FILE:LINE:COL diagnostics, printed as they are.
StatusOr<std::unique_ptr<Driver>> MakeDriver(SchedulerOptions& o, std::ofstream* progress,
                                             Failure* f) {
  for (const std::string& s : o.sets) {
    auto kv = frontend::ParseSetFlag(s);
    if (!kv.ok()) {
      *f = {2, "rigel-scheduler: " + kv.status().message()};
      return kv.status();
    }
    o.driver.sets.push_back(*kv);
  }
  o.driver.workers = o.workers;
  o.driver.servers = o.servers;
  if (!o.progress_to.empty()) {
    progress->open(o.progress_to, std::ios::app);
    if (!*progress) {
      *f = {2, "rigel-scheduler: cannot write progress to " + o.progress_to};
      return Unavailable(f->message);
    }
    o.driver.progress = progress;
  }
  auto d = Driver::Create(o.driver);
  if (!d.ok()) {
    const bool diagnostics = d.status().code() == StatusCode::kInvalidArgument;
    // A damaged or foreign checkpoint, or a directory that cannot take one,
    // is not a usage error; nor is an output file that cannot be written or
    // a data file that is not there (exit 1, as serially:
    // docs/operations.md).
    const StatusCode code = d.status().code();
    const bool checkpoint = (!o.driver.resume.empty() || !o.driver.checkpoint_dir.empty()) &&
                            code == StatusCode::kFailedPrecondition;
    const bool io = code == StatusCode::kIoError || code == StatusCode::kNotFound;
    *f = {checkpoint || io ? 1 : 2,
          (diagnostics ? "" : "rigel-scheduler: ") + d.status().message()};
  }
  return d;
}

StatusOr<std::unique_ptr<transport::Transport>> StartTransport(const SchedulerOptions& o) {
  transport::TransportOptions to;
  to.self = {transport::Role::kScheduler, 0};
  to.backend = o.transport.empty() ? "zmq" : o.transport;
  if (o.transport.empty() && o.listen.empty()) {
    // A job started without launcher (a test, a script) follows $RIGEL_TRANSPORT too.
    if (const char* env = std::getenv("RIGEL_TRANSPORT"); env != nullptr && *env != '\0') {
      to.backend = env;
    }
  }
  RIGEL_RETURN_IF_ERROR(transport::CheckBackendName(to.backend));
  if (!o.listen.empty()) {
    RIGEL_ASSIGN_OR_RETURN(std::string listen_backend, transport::BackendOfAddress(o.listen));
    if (o.transport.empty()) {
      to.backend = listen_backend;
    } else if (listen_backend != o.transport) {
      return InvalidArgument("--listen " + o.listen + " is a " + listen_backend +
                             " address, not one of --transport " + o.transport);
    }
  }
  to.listen = o.listen.empty() ? transport::DefaultListen(to.backend) : o.listen;
  to.key_file = o.key_file;
  to.insecure_plain = o.insecure_plain;
  RIGEL_ASSIGN_OR_RETURN(auto t, transport::Create(to));
  if (!o.address_file.empty()) {
    RIGEL_RETURN_IF_ERROR(WriteFileAtomically(o.address_file, t->address() + "\n"));
  }
  return t;
}

// Runs the coordinator (and the driver, if any) until the job ends.
Status RunJob(transport::Transport* t, const cluster::ClusterSetup& setup, Driver* driver,
              const SchedulerOptions& o, std::ostream& err) {
  CoordinatorOptions co;
  co.setup = setup;
  co.heartbeat = std::chrono::milliseconds(o.heartbeat_ms);
  co.heartbeat_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.heartbeat_timeout_s * 1000));
  co.log = &err;
  co.register_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.register_timeout_s * 1000));
  if (!o.driver.program.empty()) {
    auto id = cluster::ProgramIdentity(o.driver.program, o.sets);
    if (!id.ok()) return id.status();
    co.identity = *id;
  }
  if (driver) co.on_message = [driver](const transport::InMessage& m) { driver->Handle(m); };
  auto coordinator = Coordinator::Start(t, co);
  {
    MutexLock l(&g_mu);
    g_coordinator = coordinator.get();
  }
  std::thread driving;
  if (driver) {
    Coordinator* c = coordinator.get();
    driver->set_servers([c] { return c->Servers(); });
    driving = std::thread([&] {
      Status st = driver->Run(t);
      if (!st.ok()) coordinator->Fail(st);
    });
  }
  Status result = coordinator->Wait();
  if (driver) {
    driver->Abort(result);
    driving.join();
  }
  // Give the shutdown messages a moment to leave before closing.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    MutexLock l(&g_mu);
    g_coordinator = nullptr;
  }
  coordinator.reset();
  t->Close();
  return result;
}

}  // namespace

int RunScheduler(SchedulerOptions o, std::ostream& err) {
  std::unique_ptr<Driver> driver;
  std::ofstream progress;
  StatusOr<cluster::ClusterSetup> setup = Internal("no setup");
  if (!o.driver.program.empty()) {
    o.driver.log = &err;
    Failure f;
    auto d = MakeDriver(o, &progress, &f);
    if (!d.ok()) {
      err << f.message;
      if (f.message.empty() || f.message.back() != '\n') err << "\n";
      return f.code;
    }
    driver = std::move(d).value();
    setup = driver->setup();
  } else {
    auto text = ReadFileToString(o.setup_file);
    if (text.ok()) setup = cluster::SetupFromJson(*text, o.setup_file);
    if (!text.ok() || !setup.ok()) {
      err << "rigel-scheduler: " << (text.ok() ? setup.status() : text.status()).message() << "\n";
      return 2;
    }
  }
  setup->servers = o.servers;
  setup->workers = o.workers;
  // An MPI-collectives job: this process takes part in the split of the
  // job's ranks (collectives/world.h) on a thread of its own, since the
  // workers reach it only after registering, and finalizes MPI at the end.
  std::promise<void> job_over;
  std::thread mpi;
  if (setup->options.collectives == "mpi") {
    if (Status st = collectives::MpiWorldAvailable(); !st.ok()) {
      err << "rigel-scheduler: --collectives mpi: " << st.message() << "\n";
      return 2;
    }
    mpi = std::thread([over = job_over.get_future(), &err]() mutable {
      if (Status st = collectives::JoinMpiWorld(/*participate=*/false, 0); !st.ok()) {
        err << "rigel-scheduler: " << st.message() << "\n";
      }
      over.wait();
      collectives::FinalizeMpiWorld();
    });
  }
  struct EndMpi {
    std::promise<void>* over;
    std::thread* mpi;
    ~EndMpi() {
      if (!mpi->joinable()) return;
      over->set_value();
      mpi->join();
    }
  } end_mpi{&job_over, &mpi};
  auto t = StartTransport(o);
  if (!t.ok()) {
    err << "rigel-scheduler: " << t.status().message() << "\n";
    // A backend or address that cannot be is a usage error; a port in use is not.
    return t.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  err << "rigel-scheduler: listening at " << (*t)->address() << " for " << o.servers
      << " server(s) and " << o.workers << " worker(s)\n";
  Status result = RunJob(t->get(), *setup, driver.get(), o, err);
  if (!result.ok()) {
    err << "rigel-scheduler: job failed: " << result.message() << "\n";
    const std::string newest = driver ? driver->NewestCheckpoint() : "";
    if (!driver || driver->checkpoint_dir().empty()) return 1;
    if (newest.empty()) {
      err << "rigel-scheduler: no checkpoint was written yet; the job must start again\n";
    } else {
      err << "rigel-scheduler: the newest checkpoint is " << newest
          << "; go on from it with --resume " << driver->checkpoint_dir() << "\n";
    }
    return result.code() == StatusCode::kUnavailable ? 3 : 1;
  }
  if (driver && !driver->finished() && !driver->checkpoint_dir().empty()) {
    // Stopped (SIGINT, SIGTERM: what mpirun and srun send every rank when
    // one dies): say where the job can go on from.
    const std::string newest = driver->NewestCheckpoint();
    err << "rigel-scheduler: stopped before the job finished; "
        << (newest.empty() ? "no checkpoint was written yet"
                           : "the newest checkpoint is " + newest +
                                 "; go on from it with --resume " + driver->checkpoint_dir())
        << "\n";
  }
  return 0;
}

bool StopScheduler(const std::string& reason) {
  MutexLock l(&g_mu);
  if (!g_coordinator) return false;
  g_coordinator->Stop(reason);
  return true;
}

}  // namespace rigel::scheduler
