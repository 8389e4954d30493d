#include "worker/task.h"

#include <kj/exception.h>

#include <string>

namespace rigel::worker {

namespace {

using analysis::ScheduleKind;

static_assert(static_cast<int>(cluster::wire::ScheduleKind::DATA_PARALLEL) ==
                  static_cast<int>(ScheduleKind::kDataParallel) &&
              static_cast<int>(cluster::wire::ScheduleKind::MODEL_PARALLEL1D) ==
                  static_cast<int>(ScheduleKind::kModelParallel1D) &&
              static_cast<int>(cluster::wire::ScheduleKind::CONFLICT_FREE2D) ==
                  static_cast<int>(ScheduleKind::kConflictFree2D) &&
              static_cast<int>(cluster::wire::ScheduleKind::WAVEFRONT) ==
                  static_cast<int>(ScheduleKind::kWavefront) &&
              static_cast<int>(cluster::wire::ScheduleKind::SERIAL) ==
                  static_cast<int>(ScheduleKind::kSerial));

constexpr uint32_t kMaxWorkers = 65536;  // as analysis::CutsFromJson

Status Bad(const std::string& field, const std::string& why) {
  return InvalidArgument("task." + field + ": " + why);
}

StatusOr<analysis::Cuts> ReadCuts(cluster::wire::TaskCuts::Reader c) {
  analysis::Cuts cuts;
  const auto kind = static_cast<uint16_t>(c.getSchedule());
  if (kind > static_cast<uint16_t>(cluster::wire::ScheduleKind::SERIAL)) {
    return Bad("run.cuts.schedule", "unknown schedule " + std::to_string(kind));
  }
  cuts.kind = static_cast<ScheduleKind>(kind);
  if (c.getWorkers() < 1 || c.getWorkers() > kMaxWorkers) {
    return Bad("run.cuts.workers",
               std::to_string(c.getWorkers()) + " is outside 1.." + std::to_string(kMaxWorkers));
  }
  cuts.workers = static_cast<int>(c.getWorkers());
  for (auto a : c.getAxes()) {
    analysis::AxisCuts axis;
    axis.dim = a.getDim();
    auto bounds = a.getBounds();
    axis.bounds.reserve(bounds.size());
    for (int64_t b : bounds) axis.bounds.push_back(b);
    cuts.axes.push_back(std::move(axis));
  }
  return cuts;
}

StatusOr<TaskSpec> Read(cluster::wire::Task::Reader task) {
  if (!task.hasRun()) return Bad("run", "missing");
  auto run = task.getRun();
  if (!run.hasCuts()) return Bad("run.cuts", "missing");
  TaskSpec spec;
  spec.loop = static_cast<int>(task.getLoop());
  spec.launch = task.getLaunch();
  spec.epoch = task.getRun().getEpoch();
  RIGEL_ASSIGN_OR_RETURN(spec.cuts, ReadCuts(run.getCuts()));
  auto outer = run.getOuter();
  for (unsigned k = 0; k < outer.size(); ++k) {
    auto v = outer[k];
    const int id = static_cast<int>(v.getId());
    if (!spec.outer.emplace(id, kernel::OuterValue{v.getIsInt(), v.getI(), v.getF()}).second) {
      return Bad("run.outer[" + std::to_string(k) + "].id",
                 "driver value " + std::to_string(id) + " given twice");
    }
  }
  spec.sized = run.getSized();
  if (spec.sized) {
    spec.space_n = run.getSpaceN();
    spec.space_m = run.getSpaceM();
    if (spec.space_n < 0) return Bad("run.spaceN", std::to_string(spec.space_n) + " is negative");
    if (spec.space_m < 0) return Bad("run.spaceM", std::to_string(spec.space_m) + " is negative");
  }
  return spec;
}

}  // namespace

StatusOr<TaskSpec> ReadTask(cluster::wire::Task::Reader task) {
  // A received message was validated (transport/codec.h), so getters do not
  // throw; a reader from elsewhere might, and a task error must stay a Status.
  try {
    return Read(task);
  } catch (const kj::Exception& e) {
    return InvalidArgument(std::string("task: malformed: ") + e.getDescription().cStr());
  }
}

}  // namespace rigel::worker
