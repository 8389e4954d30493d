// Bytecode disassembly for tests and `rigel dump-ir --bytecode`.
#include <string>

#include "kernel/kernel_impl.h"

namespace rigel::kernel {

const char* CodeName(uint16_t code) {
  static const char* kNames[] = {
      "end",           "iadd",          "isub",          "imul",
      "idiv",          "imin",          "imax",          "ilt",
      "ile",           "igt",           "ige",           "ieq",
      "ine",           "ineg",          "fadd",          "fsub",
      "fmul",          "fdiv",          "fmin",          "fmax",
      "flt",           "fle",           "fgt",           "fge",
      "feq",           "fne",           "fun",           "itof",
      "band",          "bor",           "bnot",          "fclip",
      "smove",         "vmove",         "vzero",         "vlin",
      "vbin",          "vbinvs",        "vbinsv",        "vun",
      "vclip",         "dot",           "sum",           "norm",
      "dot.op",        "rd.elem1",      "rd.elem2",      "rd.row.view",
      "rd.row.copy",   "rd.whole.view", "rd.whole.copy", "rd.row.view2",
      "wr.elem1",      "wr.elem2",      "wr.row.vec",    "wr.row.scalar",
      "wr.row.lin",    "wr.row.pair",   "wr.whole.vec",  "wr.whole.scalar",
      "wr.whole.lin",  "accum",         "rand",          "randint",
      "negative",      "label",         "rowx",          "jump",
      "jump.if.false", "for.init",      "for.next",      "feat.init",
      "feat.next",     "win.init",      "win.next",      "key"};
  return code < sizeof(kNames) / sizeof(kNames[0]) ? kNames[code] : "?";
}

std::string Kernel::Disassemble() const {
  std::string out;
  int pc = 0;
  for (const VOp& o : impl_->code) {
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
        const Term& term = impl_->terms[o.t + t];
        out += (t && t != o.c ? " + " : "") + std::string("s") + std::to_string(term.coef) + "*s" +
               std::to_string(term.coef2) + "*" +
               (term.src < 0 ? std::string("self") : "v" + std::to_string(term.src));
      }
      out += "]";
    }
    out += "\n";
  }
  return out;
}

}  // namespace rigel::kernel
