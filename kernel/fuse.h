// Bytecode peephole passes that run after instruction selection (private to
// the kernel compiler).
#ifndef RIGEL_KERNEL_FUSE_H_
#define RIGEL_KERNEL_FUSE_H_

#include "kernel/kernel_impl.h"

namespace rigel::kernel {

// Fuses a row write `P[i] = f` followed (with only pure scalar instructions
// between) by `Q[j] = g` into one pass that computes both rows from the old
// values, when P != Q (so the rows cannot overlap), g reads no view of P and
// both are short linear forms of equal width. Sequential semantics are kept:
// g could not have seen P's new row anyway, and f never reads Q's new row.
// Afterwards, a row copy whose only reason was a write to its parameter that
// now happens in the same instruction as the copy's last use becomes a view.
// This is the shape of every two-sided SGD update (MF, embeddings).
void FusePairedRowWrites(Kernel::Impl* k);

// Merges two consecutive row views (no jump target between) into one
// instruction: views are just address arithmetic, so the dispatch dominates.
void FuseRowViews(Kernel::Impl* k);

// Fuses a dot product whose only use is the immediately following scalar
// add, subtract or multiply into it (`e = v - dot(W[i], H[j])`).
void FuseDotIntoScalarOp(Kernel::Impl* k);

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_FUSE_H_
