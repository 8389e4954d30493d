// The bytecode interpreter: a loop over elements that binds the loop
// variables and runs the bytecode through a table of label addresses
// (direct threading: one indirect jump per instruction, which the branch
// predictor learns per opcode). What each instruction does is in
// kernel/ops.h; vector instructions do a whole row per dispatch, which is
// what keeps the interpreter within a small factor of hand-written loops.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "data/element_origin.h"
#include "kernel/elements.h"
#include "kernel/kernel_impl.h"
#include "kernel/ops.h"
#include "kernel/tier.h"

namespace rigel::kernel {

namespace {

// Elements the interpreter runs between two looks at the tier under --jit
// auto: the clock read costs about one element of the smallest body.
constexpr int64_t kTierStretch = 1024;

// Keeps rand(), randint() and negative() streams apart for equal coordinates.
constexpr uint64_t kRandSalt = 0x72616e64;      // "rand"
constexpr uint64_t kNegativeSalt = 0x6e656773;  // "negs"

// The registers of one run: scalar slots with the constants and the outer
// values filled in, and the vector buffers the bytecode owns.
struct Registers {
  std::vector<Slot> slots;
  std::vector<float> arena;
  std::vector<float*> vecs;
};

Status InitRegisters(const Kernel::Impl& K, const RunContext& ctx, Registers* r) {
  r->slots = K.slot_init;
  r->arena.assign(static_cast<size_t>(K.arena_size) + 16, 0.0f);
  r->vecs.assign(K.num_vecs, nullptr);
  for (int v = 0; v < K.num_vecs; ++v) {
    if (K.vec_offset[v] >= 0) r->vecs[v] = r->arena.data() + K.vec_offset[v];
  }
  for (const auto& [slot, id] : K.outer) {
    RIGEL_ASSIGN_OR_RETURN(OuterValue ov, ctx.outer(id));
    // The register's type is the expression's declared type.
    if (K.prog->exprs[id].is_int) {
      r->slots[slot].i = ov.is_int ? ov.i : static_cast<int64_t>(ov.f);
    } else {
      r->slots[slot].f = static_cast<float>(ov.is_int ? static_cast<double>(ov.i) : ov.f);
    }
  }
  return Status::Ok();
}

// A fault as a Status: the program position, then the data line of the
// element that failed (bad indices usually come from the data). Cold and out
// of line so that error paths cost the hot loop nothing.
__attribute__((noinline, cold)) Status FaultStatus(const Kernel::Impl& K, const data::Dataset& data,
                                                   int64_t e, const ops::Fault& f) {
  std::string msg;
  switch (f.kind) {
    case ops::Fault::kOverflow:
      msg = "integer overflow";
      break;
    case ops::Fault::kDivByZero:
      msg = "integer division by zero";
      break;
    case ops::Fault::kModByZero:
      msg = "integer modulo by zero";
      break;
    case ops::Fault::kBadInt:
      msg = BadIntMessage(f.real);
      break;
    case ops::Fault::kBadI32:
      msg = "i32 value " + std::to_string(f.value) +
            " is outside [-16777216, 16777216], where i32 parameters are exact";
      break;
    case ops::Fault::kBadRow:
    case ops::Fault::kBadColumn:
      msg = "index " + std::to_string(f.value) + " out of range for " +
            (f.kind == ops::Fault::kBadRow ? "the rows" : "the columns") + " of '" +
            K.prog->params[f.param].name + "' (" + std::to_string(f.limit) + ")";
      break;
    case ops::Fault::kBadRandInt:
      msg = "randint bound must be positive, got " + std::to_string(f.value);
      break;
    case ops::Fault::kBadRadius:
      msg = "window radius must not be negative, got " + std::to_string(f.value);
      break;
    case ops::Fault::kBadElement:
      msg = "element index " + std::to_string(f.value) + " out of range for a vector of width " +
            std::to_string(f.limit);
      break;
    case ops::Fault::kBadAccumElement:
      msg = "element index " + std::to_string(f.value) + " out of range for accumulator '" +
            K.prog->accums[f.param].name + "' (width " + std::to_string(f.limit) + ")";
      break;
    case ops::Fault::kBadSample:
      msg = BadSampleMessage(f.value, f.real);
      break;
    case ops::Fault::kBadOneHot:
      msg = "onehot index " + std::to_string(f.value) + " out of range for width " +
            std::to_string(f.limit);
      break;
    case ops::Fault::kNotHeld:
      // Not the program's error: the plan of what this worker holds missed
      // an element its loops read.
      return Internal("element " + std::to_string(f.value) + " of data set '" +
                      K.prog->data[K.data].name + "' (" + data.path +
                      ") is not held by this worker, which holds " +
                      std::to_string(data.HeldCount()) + " of its " + std::to_string(data.count) +
                      " elements; please report this");
    case ops::Fault::kRowNotHeld: {
      // Not the program's error either: the rows planned for the step
      // (analysis/step_plan.h) missed one the kernel touched.
      const std::string& name = K.prog->params[f.param].name;
      const ir::Loc at = f.loc >= 0 ? K.locs[f.loc] : ir::Loc{};
      return Internal(ir::FormatDiagnostic(*K.prog->source, at,
                                           f.value < 0
                                               ? "'" + name + "' is read or written whole, but " +
                                                     "this worker holds only some of its rows"
                                               : "row " + std::to_string(f.value) + " of '" + name +
                                                     "' is not held by this worker") +
                      data::ElementNote(data, K.prog->data[K.data].name, e, "while running") +
                      "; please report this");
    }
    case ops::Fault::kNone:
      msg = "internal error: a fault without a kind";
      break;
  }
  ir::Loc loc = f.loc >= 0 ? K.locs[f.loc] : ir::Loc{};
  return OutOfRange(ir::FormatDiagnostic(*K.prog->source, loc, msg) +
                    data::ElementNote(data, K.prog->data[K.data].name, e, "while running"));
}

// Elements list[begin..end) (begin..end without a list) through the
// interpreter; `keys` as in RunSome. `m` is a copy, so that its fields stay
// in registers.
Status Interpret(const Kernel::Impl& K, const data::Dataset& data, const int64_t* list,
                 int64_t begin, int64_t end, std::vector<std::vector<int64_t>>* keys,
                 ops::Machine m) {
  const int* vars = K.var_slots.data();
  std::vector<size_t> marks(keys ? keys->size() : 0);
  m.key_mark = marks.data();

  // clang-format off
#define RIGEL_LABEL(name, text) [k##name] = &&L_##name,
  static const void* const kLabels[] = {
      [kEnd] = &&L_End, RIGEL_KERNEL_OPCODES(RIGEL_LABEL) [ops::kFaulted] = &&L_Faulted};
#undef RIGEL_LABEL
  static_assert(sizeof(kLabels) / sizeof(kLabels[0]) == ops::kFaulted + 1,
                "every opcode needs a label");
  // Each handler ends in its own indirect jump.
#define RIGEL_OP(name, text) \
  L_##name:                  \
  o = ops::name(m, o);       \
  goto* kLabels[o->code];

  for (int64_t k = begin; k < end; ++k) {
    const int64_t e = list ? list[k] : k;
    if (list && k + kPrefetchAhead < end) Prefetch(data, K.kind, list[k + kPrefetchAhead]);
    const int64_t l = data.Local(e);
    if (l < 0) [[unlikely]] {
      return FaultStatus(K, data, e, ops::Fault{.kind = ops::Fault::kNotHeld, .value = e});
    }
    BindElement(data, K.kind, vars, m.S, e, l);
    for (size_t p = 0; p < marks.size(); ++p) marks[p] = (*keys)[p].size();
    m.e = e;
    m.draw = 0;
    const VOp* o = m.code;
    goto* kLabels[o->code];
    RIGEL_KERNEL_OPCODES(RIGEL_OP)
  L_Faulted:
    return FaultStatus(K, data, m.e, m.fault);
  L_End:;
  }
  // clang-format on
#undef RIGEL_OP
  return Status::Ok();
}

// The same elements through a compiled body (kernel/jit/jit.h), whose
// element loop is compiled with it.
Status RunCompiled(const Kernel::Impl& K, const data::Dataset& data, const int64_t* list,
                   int64_t begin, int64_t end, jit::BodyFn body, ops::Machine& m) {
  switch (body(&m, &data, list, begin, end)) {
    case kRanAll:
      return Status::Ok();
    case kElementFaulted:
      return FaultStatus(K, data, m.e, m.fault);
    default:
      return FaultStatus(K, data, m.e, ops::Fault{.kind = ops::Fault::kNotHeld, .value = m.e});
  }
}

}  // namespace

Status Kernel::Run(const RunContext& ctx, int64_t begin, int64_t end) const {
  return RunSome(ctx, nullptr, begin, end, nullptr);
}

Status Kernel::CheckElements(const RunContext& ctx, std::span<const int64_t> elements) const {
  const int64_t count = (*ctx.data)[impl_->data]->count;
  for (int64_t e : elements) {
    if (e < 0 || e >= count) {
      return InvalidArgument("element " + std::to_string(e) + " is outside the loop's " +
                             std::to_string(count) + " elements");
    }
  }
  return Status::Ok();
}

Status Kernel::RunElements(const RunContext& ctx, std::span<const int64_t> elements) const {
  RIGEL_RETURN_IF_ERROR(CheckElements(ctx, elements));
  return RunSome(ctx, elements.data(), 0, static_cast<int64_t>(elements.size()), nullptr);
}

Status Kernel::RunSome(const RunContext& ctx, const int64_t* list, int64_t begin, int64_t end,
                       KeyTrace* keys) const {
  const Impl& K = *impl_;
  Registers regs;
  RIGEL_RETURN_IF_ERROR(InitRegisters(K, ctx, &regs));
  const data::Dataset& data = *(*ctx.data)[K.data];
  ops::Machine m{.S = regs.slots.data(),
                 .V = regs.vecs.data(),
                 .P = ctx.params->data(),
                 .datas = ctx.data->data(),
                 .code = K.code.data(),
                 .terms = K.terms.data(),
                 .acc = ctx.accums,
                 // Only key slices have kKey instructions; for them the trace
                 // has a list per parameter (KeySlice::Run sizes it).
                 .key_out = keys ? keys->data() : nullptr,
                 .key_mark = nullptr,
                 .rand_seed = ctx.seed ^ kRandSalt,
                 .negative_seed = ctx.seed ^ kNegativeSalt,
                 .run_key = (static_cast<uint64_t>(K.loop) << 32) | ctx.launch,
                 .e = -1,
                 .draw = 0,
                 .fault = {}};
  if (keys != nullptr) return Interpret(K, data, list, begin, end, keys, m);
  // Under --jit auto the interpreter runs stretches of elements, timed,
  // until the body is compiled; the rest of the run is compiled code.
  Tier& tier = *K.tier;
  int64_t k = begin;
  while (k < end) {
    if (jit::BodyFn fn = tier.Body(); fn != nullptr && tier.Fits(*ctx.params)) {
      return RunCompiled(K, data, list, k, end, fn, m);
    }
    if (!tier.Watching()) break;
    const int64_t stop = std::min(end, k + kTierStretch);
    const auto start = std::chrono::steady_clock::now();
    RIGEL_RETURN_IF_ERROR(Interpret(K, data, list, k, stop, nullptr, m));
    tier.Interpreted(K,
                     std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - start)
                         .count(),
                     stop - k, ctx.work_left < 0 ? -1 : ctx.work_left + (end - stop));
    k = stop;
  }
  return Interpret(K, data, list, k, end, nullptr, m);
}

}  // namespace rigel::kernel
