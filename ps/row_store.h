// Storage for the rows of one parameter shard on a parameter server
// (layouts, memory and speed: docs/parameter_servers.md).
//
// RangeStore holds rows [begin, end) in one array, all initialised up front;
// HashStore holds any subset of row ids, created on first touch, in an
// open-addressing table of our own. A row's initial value comes from a
// RowInit, a pure function of the row id, so it does not depend on which
// server holds it. Errors: InvalidArgument for a bad range or width.
//
// Thread-safety: all methods are thread-safe. Rows are guarded by 16 lock
// stripes; a batch runs on up to 16 threads (oneTBB), each owning whole
// stripes, so a row is never seen half-updated and repeated keys apply in
// batch order.
#ifndef RIGEL_PS_ROW_STORE_H_
#define RIGEL_PS_ROW_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "common/status.h"

namespace rigel::ps {

// How pushed values change a row (per element, v the pushed value):
//   kAssign:  w = v
//   kAdd:     w += v           (deltas; what relaxed parameters push)
//   kSgd:     w -= lr * v      (v a gradient)
//   kAdagrad: h += v * v; w -= lr * v / (sqrt(h) + eps)   (h kept per element)
enum class UpdateRule : uint8_t { kAssign, kAdd, kSgd, kAdagrad };

struct UpdateOptions {
  UpdateRule rule = UpdateRule::kAdd;
  float lr = 0.01f;
  float eps = 1e-8f;
};

// Writes the initial value of row `row` (width floats) to `out`. Must be a
// pure function of `row` and thread-safe.
using RowInit = std::function<void(int64_t row, float* out)>;

class RowStore {
 public:
  virtual ~RowStore() = default;

  int64_t width() const { return width_; }

  // Copies the rows `keys[k]` into out[k * width .. (k + 1) * width). Keys
  // need not be sorted or distinct. A hash store creates missing rows with
  // their initial value; a range store returns OutOfRange for a key outside
  // its range (and copies nothing).
  virtual Status Pull(std::span<const int64_t> keys, float* out) = 0;

  // Applies `values` (keys.size() * width floats, row k at k * width) to the
  // rows `keys` with `opts.rule`. Repeated keys are applied in order. Same
  // errors as Pull; on error nothing is applied.
  virtual Status Push(std::span<const int64_t> keys, const float* values,
                      const UpdateOptions& opts) = 0;

  // Rows stored now (a range store: all of its range).
  virtual int64_t rows() const = 0;
  // Bytes of memory this store holds (tables, arenas, optimizer state), for
  // the memory-per-row figure.
  virtual size_t bytes() const = 0;

 protected:
  explicit RowStore(int64_t width) : width_(width) {}
  int64_t width_;
};

// Rows [begin, end) of width `width`, initialised with `init`.
// InvalidArgument if the range is empty or too large to allocate.
StatusOr<std::unique_ptr<RowStore>> NewRangeStore(int64_t begin, int64_t end, int64_t width,
                                                  const RowInit& init);

// An empty hash store of rows of width `width`; rows are created by `init`
// on first touch. Row ids may be any non-negative int64.
std::unique_ptr<RowStore> NewHashStore(int64_t width, RowInit init);

}  // namespace rigel::ps

#endif  // RIGEL_PS_ROW_STORE_H_
