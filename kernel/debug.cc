// Bytecode disassembly for tests and `rigel dump-ir --bytecode`.
#include <string>

#include "kernel/kernel_impl.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel {

const char* CodeName(uint16_t code) {
  // clang-format off
  static const char* kNames[] = {
      "end",           "iadd",          "isub",          "imul",
      "idiv",          "imod",          "imin",          "imax",
      "ilt",           "ile",           "igt",           "ige",
      "ieq",           "ine",           "ineg",          "fadd",
      "fsub",          "fmul",          "fdiv",          "fmin",
      "fmax",          "fpow",          "flt",           "fle",
      "fgt",           "fge",           "feq",           "fne",
      "fun",
      "itof",          "ftoi",          "itoi32",
      "band",          "bor",           "bnot",          "fclip",
      "smove",         "vmove",         "vzero",         "vlin",
      "vbin",          "vbinvs",        "vbinsv",        "vun",
      "vclip",         "dot",           "sum",           "norm",
      "velem",         "vpick",         "onehot",        "vset",
      "sample",
      "dot.op",        "rd.elem1",      "rd.elem2",      "rd.row.view",
      "rd.row.copy",   "rd.whole.view", "rd.whole.copy", "rd.row.view2",
      "wr.elem1",      "wr.elem2",      "wr.row.vec",    "wr.row.scalar",
      "wr.row.lin",    "wr.row.pair",   "wr.whole.vec",  "wr.whole.scalar",
      "wr.whole.lin",  "accum",         "accum.vec",     "accum.elem",
      "rand",          "randint",
      "negative",      "label",         "rowx",          "jump",
      "jump.if.false", "for.init",      "for.next",      "feat.init",
      "feat.next",     "win.init",      "win.next",      "key"};
  // clang-format on
  return code < sizeof(kNames) / sizeof(kNames[0]) ? kNames[code] : "?";
}

namespace {

// " generic" when `o` runs a width-independent row kernel although one
// specialised for its width exists (specialise-row-kernels did not run).
std::string KernelNote(const Kernel::Impl& k, const VOp& o) {
  bool generic = false;
  switch (o.code) {
    case kVLin:
    case kWrRowLin:
    case kWrWholeLin:
      generic = o.k.lin != SelectLin(o.c, o.n);
      break;
    case kWrRowPair:
      generic = o.k.pair != SelectPair(o.c, o.fn, k.prog->params[o.aux].width);
      break;
    case kDot:
    case kNorm:
    case kDotOp:
      generic = o.k.dot != SelectDot(o.n);
      break;
    case kVMove:
    case kRdRowCopy:
    case kRdWholeCopy:
      generic = o.k.copy != SelectCopy(o.n);
      break;
    default:
      break;
  }
  return generic ? " generic" : "";
}

}  // namespace

std::string Kernel::Disassemble() const { return kernel::Disassemble(*impl_); }

std::string Disassemble(const Kernel::Impl& k) {
  std::string out;
  int pc = 0;
  for (const VOp& o : k.code) {
    out += std::to_string(pc++) + ": " + CodeName(o.code);
    auto field = [&](const char* name, int v) {
      if (v >= 0) out += std::string(" ") + name + "=" + std::to_string(v);
    };
    field("d", o.d);
    field("a", o.a);
    field("b", o.b);
    field("c", o.c);
    if (o.n) field("n", o.n);
    field("aux", o.aux);
    if (o.code == kVLin || o.code == kWrRowLin || o.code == kWrWholeLin || o.code == kWrRowPair) {
      out += " [";
      int count = o.c + (o.code == kWrRowPair ? o.fn : 0);
      for (int t = 0; t < count; ++t) {
        if (o.code == kWrRowPair && t == o.c) out += " | ";
        const Term& term = k.terms[o.t + t];
        out += (t && t != o.c ? " + " : "") + std::string("s") + std::to_string(term.coef) + "*s" +
               std::to_string(term.coef2) + "*" +
               (term.src < 0 ? std::string("self") : "v" + std::to_string(term.src));
      }
      out += "]";
    }
    out += KernelNote(k, o) + "\n";
  }
  return out;
}

}  // namespace rigel::kernel
