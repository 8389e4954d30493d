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
#define RIGEL_JIT_OP(name) [k##name] = reinterpret_cast<const void*>(&Run<ops::name>)
extern "C" const void* const rigel_jit_ops[ops::kFaulted] = {
    [kEnd] = nullptr,
    RIGEL_JIT_OP(IAdd), RIGEL_JIT_OP(ISub), RIGEL_JIT_OP(IMul), RIGEL_JIT_OP(IDiv),
    RIGEL_JIT_OP(IMod), RIGEL_JIT_OP(IMin), RIGEL_JIT_OP(IMax), RIGEL_JIT_OP(ILt),
    RIGEL_JIT_OP(ILe), RIGEL_JIT_OP(IGt), RIGEL_JIT_OP(IGe), RIGEL_JIT_OP(IEq),
    RIGEL_JIT_OP(INe), RIGEL_JIT_OP(INeg), RIGEL_JIT_OP(FAdd), RIGEL_JIT_OP(FSub),
    RIGEL_JIT_OP(FMul), RIGEL_JIT_OP(FDiv), RIGEL_JIT_OP(FMin), RIGEL_JIT_OP(FMax),
    RIGEL_JIT_OP(FPow), RIGEL_JIT_OP(FLt), RIGEL_JIT_OP(FLe), RIGEL_JIT_OP(FGt),
    RIGEL_JIT_OP(FGe), RIGEL_JIT_OP(FEq), RIGEL_JIT_OP(FNe), RIGEL_JIT_OP(FUn),
    RIGEL_JIT_OP(IToF), RIGEL_JIT_OP(FToI), RIGEL_JIT_OP(IToI32), RIGEL_JIT_OP(BAnd),
    RIGEL_JIT_OP(BOr), RIGEL_JIT_OP(BNot), RIGEL_JIT_OP(FClip), RIGEL_JIT_OP(SMove),
    RIGEL_JIT_OP(VMove), RIGEL_JIT_OP(VZero), RIGEL_JIT_OP(VLin), RIGEL_JIT_OP(VBin),
    RIGEL_JIT_OP(VBinVS), RIGEL_JIT_OP(VBinSV), RIGEL_JIT_OP(VUn), RIGEL_JIT_OP(VClip),
    RIGEL_JIT_OP(Dot), RIGEL_JIT_OP(Sum), RIGEL_JIT_OP(Norm), RIGEL_JIT_OP(VElem),
    RIGEL_JIT_OP(VPick), RIGEL_JIT_OP(OneHot), RIGEL_JIT_OP(VSet), RIGEL_JIT_OP(Sample),
    RIGEL_JIT_OP(DotOp), RIGEL_JIT_OP(RdElem1), RIGEL_JIT_OP(RdElem2), RIGEL_JIT_OP(RdRowView),
    RIGEL_JIT_OP(RdRowCopy), RIGEL_JIT_OP(RdWholeView), RIGEL_JIT_OP(RdWholeCopy),
    RIGEL_JIT_OP(RdRowView2), RIGEL_JIT_OP(WrElem1), RIGEL_JIT_OP(WrElem2),
    RIGEL_JIT_OP(WrRowVec), RIGEL_JIT_OP(WrRowScalar), RIGEL_JIT_OP(WrRowLin),
    RIGEL_JIT_OP(WrRowPair), RIGEL_JIT_OP(WrWholeVec), RIGEL_JIT_OP(WrWholeScalar),
    RIGEL_JIT_OP(WrWholeLin), RIGEL_JIT_OP(Accum), RIGEL_JIT_OP(AccumVec),
    RIGEL_JIT_OP(AccumElem), RIGEL_JIT_OP(Rand), RIGEL_JIT_OP(RandInt),
    RIGEL_JIT_OP(Negative), RIGEL_JIT_OP(Label), RIGEL_JIT_OP(RowX), RIGEL_JIT_OP(Jump),
    RIGEL_JIT_OP(JumpIfFalse), RIGEL_JIT_OP(ForInit), RIGEL_JIT_OP(ForNext),
    RIGEL_JIT_OP(FeatInit), RIGEL_JIT_OP(FeatNext), RIGEL_JIT_OP(WinInit),
    RIGEL_JIT_OP(WinNext), RIGEL_JIT_OP(Key)};
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
