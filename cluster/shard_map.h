// Which parameter server holds which row of each `ps` parameter.
//
// Range-sharded parameters (rows follow a loop variable) are cut into S
// contiguous ranges of equal size; hash-sharded ones (indirect rows: embeddings,
// feature weights) put row r of parameter p on server floor(h * S / 2^64) with
// h = Mix64(r xor xxh64(name of p)), so hot rows of one parameter spread
// over every server and the placement does not depend on the parameter's
// declaration order. Both are pure functions of (name, rows, S): every
// process computes the same map from the plan and the data sizes, and nothing
// about a row's value depends on where it lives (initial values are a pure
// function of the row, ir/param_init.h).
//
// Immutable after construction; thread-safe.
#ifndef RIGEL_CLUSTER_SHARD_MAP_H_
#define RIGEL_CLUSTER_SHARD_MAP_H_

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "common/status.h"

namespace rigel::cluster {

struct ShardedParam {
  std::string name;
  int64_t rows = 0;   // row count (known once the data are loaded)
  int64_t width = 1;  // floats per row
  bool hash = false;  // hash shards (else range shards)
};

class ShardMap {
 public:
  // InvalidArgument if servers < 1 or a parameter has no rows.
  static StatusOr<ShardMap> Create(std::vector<ShardedParam> params, int servers);

  int servers() const { return servers_; }
  const std::vector<ShardedParam>& params() const { return params_; }

  // The server holding row `row` of parameter `param` (an index into params()).
  // Inline: clients and servers call it for every key of every batch.
  int ServerOf(int param, int64_t row) const {
    if (servers_ == 1) return 0;
    const ShardedParam& p = params_[param];
    if (p.hash) {
      // One mix and a multiply-shift instead of a division.
      uint64_t h = Mix64(static_cast<uint64_t>(row) ^ name_hash_[param]);
      return static_cast<int>((static_cast<unsigned __int128>(h) * servers_) >> 64);
    }
    // Server s holds [floor(rows * s / S), floor(rows * (s + 1) / S)); the
    // owner is the largest s whose start is <= row, which is this.
    return static_cast<int>((static_cast<__int128>(row + 1) * servers_ - 1) / p.rows);
  }

  // Range shards: the rows [begin, end) of `param` on `server` (empty for a
  // server with none). Hash shards: [0, rows) (any row may be there).
  std::pair<int64_t, int64_t> RangeOf(int param, int server) const;

  // Splits `keys` (any order) by server: out[s] gets the keys of server s in
  // their input order, and pos[s] their positions in `keys`.
  void Split(int param, std::span<const int64_t> keys, std::vector<std::vector<int64_t>>* out,
             std::vector<std::vector<uint32_t>>* pos) const;

 private:
  ShardMap() = default;
  std::vector<ShardedParam> params_;
  std::vector<uint64_t> name_hash_;
  int servers_ = 1;
};

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_SHARD_MAP_H_
