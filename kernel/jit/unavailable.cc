// kernel/jit/jit.h in a build without LLVM (RIGEL_WITH_LLVM=OFF, or AUTO on a
// machine without llvm-19-dev and clang-19): every body runs interpreted, and
// asking for the JIT says why.
#include "kernel/jit/jit.h"

namespace rigel::kernel::jit {

Status Available() {
  return FailedPrecondition(
      "this build has no JIT: LLVM 19 was not found when it was configured (install llvm-19-dev "
      "and clang-19, scripts/setup.sh does, and configure with -DRIGEL_WITH_LLVM=ON)");
}

StatusOr<Compiled> Compile(const Kernel::Impl&, bool) { return Available(); }

}  // namespace rigel::kernel::jit
