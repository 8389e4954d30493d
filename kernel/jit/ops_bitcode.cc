// Not compiled into any library: clang++-19 compiles this file to LLVM
// bitcode (kernel/CMakeLists.txt), which is embedded in rigel::kernel and
// which the JIT (kernel/jit/jit.cc) links into every body it compiles. It
// holds every opcode's semantics exactly as the interpreter runs them: the
// same inline functions of kernel/ops.h, with row kernels instantiated from
// the same templates (kernel/row_calls.h), so a compiled body computes what
// the interpreter computes, bit for bit, with the dispatch and the operand
// decoding folded away.
//
// Exports, by C names the JIT looks up:
// - rigel_jit_ops[code]: the function running opcode `code`,
//   `const VOp* (ops::Machine*, const VOp*)`, returning the next instruction
//   as the interpreter's handler does; null for kEnd.
// - rigel_jit_drive: the element loop (kernel/elements.h RunEach) calling a
//   body `int (ops::Machine*)` for each element.
// - rigel_jit_layout: the sizes and offsets the JIT builds its IR with, which
//   it checks against its own (the host compiler's) before using the bitcode.
#define RIGEL_KERNEL_JIT_BITCODE 1

#include <cstddef>

#include "kernel/elements.h"
#include "kernel/jit/layout.h"
#include "kernel/ops.h"

namespace rigel::kernel::jit {
namespace {

template <const VOp* (*Op)(ops::Machine&, const VOp*)>
const VOp* Run(ops::Machine* m, const VOp* o) {
  return Op(*m, o);
}

}  // namespace
}  // namespace rigel::kernel::jit

using rigel::kernel::jit::Run;
namespace ops = rigel::kernel::ops;
using namespace rigel::kernel;  // the opcodes (kIAdd ...)

#pragma clang diagnostic ignored "-Wc99-designator"
#pragma clang diagnostic ignored "-Wreorder-init-list"

// clang-format off
#define RIGEL_JIT_OP(name, text) [k##name] = reinterpret_cast<const void*>(&Run<ops::name>),
extern "C" const void* const rigel_jit_ops[ops::kFaulted] = {
    [kEnd] = nullptr, RIGEL_KERNEL_OPCODES(RIGEL_JIT_OP)};
#undef RIGEL_JIT_OP
// clang-format on

extern "C" int rigel_jit_drive(ops::Machine* m, const rigel::data::Dataset* data, int kind,
                               const int* vars, const int64_t* list, int64_t begin, int64_t end,
                               int (*body)(ops::Machine*)) {
  return RunEach(*m, *data, static_cast<rigel::data::DataKind>(kind), vars, list, begin, end,
                 [&](ops::Machine& mm) { return body(&mm); });
}

extern "C" const uint64_t rigel_jit_layout[rigel::kernel::jit::kLayoutFields] = {
    RIGEL_JIT_LAYOUT_VALUES};

// Dataset::Local's slow path (a data set held in part) is out of line in the
// host program, whose symbols a JIT cannot see; here it calls the host
// through a symbol the JIT defines (kernel/jit/jit.cc).
extern "C" int64_t rigel_jit_local_slow(const rigel::data::Dataset* d, int64_t e);
int64_t rigel::data::Dataset::LocalSlow(int64_t e) const { return rigel_jit_local_slow(this, e); }
