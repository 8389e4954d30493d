#include "cluster/shard_map.h"

#include <gtest/gtest.h>

#include <map>

namespace rigel::cluster {
namespace {

TEST(ShardMap, RangeShardsAreContiguousAndCoverEveryRow) {
  for (int servers : {1, 2, 3, 7}) {
    for (int64_t rows : {1, 5, 100, 1001}) {
      auto m = ShardMap::Create({{"W", rows, 16, false}}, servers);
      ASSERT_TRUE(m.ok());
      int64_t next = 0;
      for (int s = 0; s < servers; ++s) {
        auto [b, e] = m->RangeOf(0, s);
        EXPECT_EQ(b, next);
        next = e;
        for (int64_t r = b; r < e; ++r)
          ASSERT_EQ(m->ServerOf(0, r), s) << rows << " rows, row " << r;
      }
      EXPECT_EQ(next, rows);
    }
  }
}

TEST(ShardMap, HashShardsSpreadRowsAndDependOnTheName) {
  auto m = ShardMap::Create({{"emb", 100000, 64, true}, {"ctx", 100000, 64, true}}, 4);
  ASSERT_TRUE(m.ok());
  std::map<int, int> count;
  int differ = 0;
  for (int64_t r = 0; r < 100000; ++r) {
    ++count[m->ServerOf(0, r)];
    differ += m->ServerOf(0, r) != m->ServerOf(1, r);
  }
  for (int s = 0; s < 4; ++s) EXPECT_NEAR(count[s], 25000, 1000) << "server " << s;
  EXPECT_GT(differ, 60000);  // about 3/4 of rows land elsewhere for another name
  // The same name gives the same placement in another map (another process).
  auto again = ShardMap::Create({{"ctx", 5, 1, true}, {"emb", 100000, 64, true}}, 4);
  ASSERT_TRUE(again.ok());
  for (int64_t r = 0; r < 1000; ++r) ASSERT_EQ(again->ServerOf(1, r), m->ServerOf(0, r));
}

TEST(ShardMap, SplitKeepsPositions) {
  auto m = ShardMap::Create({{"w", 10, 1, false}}, 2);
  ASSERT_TRUE(m.ok());
  std::vector<int64_t> keys = {9, 0, 5, 4};
  std::vector<std::vector<int64_t>> out;
  std::vector<std::vector<uint32_t>> pos;
  m->Split(0, keys, &out, &pos);
  EXPECT_EQ(out[0], (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(out[1], (std::vector<int64_t>{9, 5}));
  EXPECT_EQ(pos[0], (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(pos[1], (std::vector<uint32_t>{0, 2}));
  EXPECT_FALSE(ShardMap::Create({{"w", 0, 1, false}}, 2).ok());
  EXPECT_FALSE(ShardMap::Create({{"w", 4, 1, false}}, 0).ok());
}

}  // namespace
}  // namespace rigel::cluster
