// Positions, use counts and last uses of a loop body's registers, and where
// each parameter is written: what the lowering (kernel/lower/lower.h) needs
// to decide which reads may be views and which linear forms may be deferred.
// Private to kernel/lower/. Immutable after construction; thread-safe.
#ifndef RIGEL_KERNEL_LOWER_LIVENESS_H_
#define RIGEL_KERNEL_LOWER_LIVENESS_H_

#include <map>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace rigel::kernel::lower {

class Liveness {
 public:
  // Analyses `loop`, which must outlive this object and not change.
  // Instructions are numbered in program order (pre-order). A use inside an
  // inner loop of a value defined outside it counts as a use just after the
  // loop's end: later iterations read it again, after any write in the loop.
  explicit Liveness(const ir::Loop& loop);

  // How many instruction operands read `reg` (a move also "reads" its var).
  int uses(int reg) const;

  // Whether a view of the parameter memory that `read` (a row or whole read)
  // reads can stand for its value: no write to that parameter lies strictly
  // between the read and the value's last use. A write at the last use
  // itself is fine, because row and whole writes are elementwise.
  bool CanView(const ir::Inst& read) const;

 private:
  int Number(const std::vector<ir::Inst>& body, int pos);
  void Use(int reg, int pos, const std::vector<std::pair<int, int>>& loops);
  void Uses(const std::vector<ir::Inst>& body, std::vector<std::pair<int, int>>* loops);

  std::map<const ir::Inst*, int> pos_, end_;
  std::map<int, int> def_, uses_, last_use_;
  std::map<int, std::vector<int>> writes_;  // parameter -> positions of its writes
};

}  // namespace rigel::kernel::lower

#endif  // RIGEL_KERNEL_LOWER_LIVENESS_H_
