// The sizes and offsets a compiled body's IR is built with (kernel/jit/jit.cc),
// computed by each compiler that includes this header: the host's (GCC in a
// Release build) and clang's for the bitcode (kernel/jit/ops_bitcode.cc, which
// exports them as rigel_jit_layout). The JIT refuses bitcode whose values
// differ from the host's, so a layout disagreement is a plain error, not a
// wrong memory access. Private to kernel/jit/.
#ifndef RIGEL_KERNEL_JIT_LAYOUT_H_
#define RIGEL_KERNEL_JIT_LAYOUT_H_

#include <cstddef>
#include <cstdint>

#include "kernel/ops.h"

namespace rigel::kernel::jit {

inline constexpr int kLayoutFields = 14;

#define RIGEL_JIT_LAYOUT_VALUES                                                               \
  sizeof(::rigel::kernel::ops::Machine), offsetof(::rigel::kernel::ops::Machine, code),       \
      sizeof(::rigel::kernel::VOp), offsetof(::rigel::kernel::VOp, k),                        \
      sizeof(::rigel::kernel::ops::Fault), ::rigel::kernel::ops::kFaulted,                    \
      sizeof(::rigel::data::Dataset), offsetof(::rigel::kernel::ops::Machine, terms),         \
      sizeof(::rigel::kernel::Term), offsetof(::rigel::kernel::ops::Machine, S),              \
      offsetof(::rigel::kernel::ops::Machine, V), offsetof(::rigel::kernel::ops::Machine, e), \
      offsetof(::rigel::kernel::ops::Machine, fault), sizeof(::rigel::kernel::Slot)

}  // namespace rigel::kernel::jit

#endif  // RIGEL_KERNEL_JIT_LAYOUT_H_
