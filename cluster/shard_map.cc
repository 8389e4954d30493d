#include "cluster/shard_map.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/hash.h"

namespace rigel::cluster {

StatusOr<ShardMap> ShardMap::Create(std::vector<ShardedParam> params, int servers) {
  if (servers < 1) return InvalidArgument("a shard map needs at least one server");
  ShardMap m;
  m.servers_ = servers;
  for (const ShardedParam& p : params) {
    if (p.rows < 1) return InvalidArgument("parameter '" + p.name + "' has no rows to shard");
    m.name_hash_.push_back(XXH64(p.name.data(), p.name.size(), 0));
  }
  m.params_ = std::move(params);
  return m;
}

std::pair<int64_t, int64_t> ShardMap::RangeOf(int param, int server) const {
  const ShardedParam& p = params_[param];
  if (p.hash) return {0, p.rows};
  auto bound = [&](int s) {
    return static_cast<int64_t>(static_cast<__int128>(p.rows) * s / servers_);
  };
  return {bound(server), bound(server + 1)};
}

void ShardMap::Split(int param, std::span<const int64_t> keys,
                     std::vector<std::vector<int64_t>>* out,
                     std::vector<std::vector<uint32_t>>* pos) const {
  out->assign(servers_, {});
  if (pos) pos->assign(servers_, {});
  for (size_t k = 0; k < keys.size(); ++k) {
    int s = ServerOf(param, keys[k]);
    (*out)[s].push_back(keys[k]);
    if (pos) (*pos)[s].push_back(static_cast<uint32_t>(k));
  }
}

}  // namespace rigel::cluster
