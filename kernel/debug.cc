// Bytecode disassembly for tests and `rigel dump-ir --bytecode`.
#include <string>

#include "kernel/kernel_impl.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel {

const char* CodeName(uint16_t code) {
#define RIGEL_NAME(name, text) text,
  static const char* kNames[] = {"end", RIGEL_KERNEL_OPCODES(RIGEL_NAME)};
#undef RIGEL_NAME
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
