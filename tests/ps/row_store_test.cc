// Parameter shard storage: initial values, update rules, errors, concurrent
// pushes that sum exactly, rows never seen half-updated, and memory per row.
#include "ps/row_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

namespace rigel::ps {
namespace {

// A deterministic initialiser: element c of row r is r + c / 100.
void Init(int64_t r, float* out, int64_t width) {
  for (int64_t c = 0; c < width; ++c) out[c] = static_cast<float>(r) + static_cast<float>(c) / 100;
}

RowInit InitOf(int64_t width) {
  return [width](int64_t r, float* out) { Init(r, out, width); };
}

std::vector<std::unique_ptr<RowStore>> BothStores(int64_t rows, int64_t width) {
  std::vector<std::unique_ptr<RowStore>> s;
  auto range = NewRangeStore(0, rows, width, InitOf(width));
  EXPECT_TRUE(range.ok());
  s.push_back(std::move(range).value());
  s.push_back(NewHashStore(width, InitOf(width)));
  return s;
}

TEST(RowStore, PullGivesInitialValues) {
  for (auto& s : BothStores(100, 3)) {
    std::vector<int64_t> keys = {7, 0, 99, 7};
    std::vector<float> out(keys.size() * 3);
    ASSERT_TRUE(s->Pull(keys, out.data()).ok());
    for (size_t k = 0; k < keys.size(); ++k) {
      for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(out[k * 3 + c], keys[k] + c / 100.0f);
    }
  }
}

TEST(RowStore, UpdateRules) {
  for (auto& s : BothStores(10, 2)) {
    std::vector<int64_t> key = {4};
    float v[2] = {2.0f, -1.0f};
    float out[2];
    ASSERT_TRUE(s->Push(key, v, {UpdateRule::kAssign}).ok());
    ASSERT_TRUE(s->Pull(key, out).ok());
    EXPECT_EQ(out[0], 2.0f);
    EXPECT_EQ(out[1], -1.0f);
    ASSERT_TRUE(s->Push(key, v, {UpdateRule::kAdd}).ok());
    ASSERT_TRUE(s->Pull(key, out).ok());
    EXPECT_EQ(out[0], 4.0f);
    EXPECT_EQ(out[1], -2.0f);
    ASSERT_TRUE(s->Push(key, v, {UpdateRule::kSgd, 0.5f}).ok());
    ASSERT_TRUE(s->Pull(key, out).ok());
    EXPECT_EQ(out[0], 3.0f);
    EXPECT_EQ(out[1], -1.5f);
    // Adagrad: h = 4, 1; w -= 0.5 * g / (sqrt(h) + eps).
    ASSERT_TRUE(s->Push(key, v, {UpdateRule::kAdagrad, 0.5f, 0.0f}).ok());
    ASSERT_TRUE(s->Pull(key, out).ok());
    EXPECT_FLOAT_EQ(out[0], 3.0f - 0.5f * 2.0f / 2.0f);
    EXPECT_FLOAT_EQ(out[1], -1.5f + 0.5f * 1.0f / 1.0f);
    // Second step: h = 8, 2.
    ASSERT_TRUE(s->Push(key, v, {UpdateRule::kAdagrad, 0.5f, 0.0f}).ok());
    ASSERT_TRUE(s->Pull(key, out).ok());
    EXPECT_FLOAT_EQ(out[0], 2.5f - 0.5f * 2.0f / std::sqrt(8.0f));
  }
}

TEST(RowStore, RepeatedKeysApplyInOrder) {
  for (auto& s : BothStores(10, 1)) {
    std::vector<int64_t> keys = {3, 3, 3};
    float v[3] = {5.0f, 2.0f, 1.0f};
    ASSERT_TRUE(s->Push(std::span<const int64_t>(keys).first(1), v, {UpdateRule::kAssign}).ok());
    ASSERT_TRUE(s->Push(std::span<const int64_t>(keys).subspan(1), v + 1, {UpdateRule::kAdd}).ok());
    float out;
    ASSERT_TRUE(s->Pull(std::span<const int64_t>(keys).first(1), &out).ok());
    EXPECT_EQ(out, 8.0f);
  }
}

TEST(RowStore, BadKeysChangeNothing) {
  auto range = NewRangeStore(10, 20, 1, InitOf(1));
  ASSERT_TRUE(range.ok());
  std::vector<int64_t> keys = {12, 20};
  float v[2] = {1.0f, 1.0f};
  Status st = (*range)->Push(keys, v, {UpdateRule::kAdd});
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("row 20 is outside this shard's rows [10, 20)"), std::string::npos);
  float out;
  ASSERT_TRUE((*range)->Pull(std::span<const int64_t>(keys).first(1), &out).ok());
  EXPECT_EQ(out, 12.0f);
  auto hash = NewHashStore(1, InitOf(1));
  keys = {1, -1};
  EXPECT_EQ(hash->Push(keys, v, {}).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(hash->rows(), 0);
  EXPECT_FALSE(NewRangeStore(5, 5, 1, InitOf(1)).ok());
  EXPECT_FALSE(NewRangeStore(0, 5, 0, InitOf(1)).ok());
}

TEST(HashStore, CreatesRowsLazilyWithTheirInitialValue) {
  auto s = NewHashStore(4, InitOf(4));
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 5000; ++k) keys.push_back((k * 7919) % 100003 + (int64_t{1} << 40));
  std::vector<float> out(keys.size() * 4);
  ASSERT_TRUE(s->Pull(keys, out.data()).ok());
  EXPECT_EQ(s->rows(), 5000);
  // Touching them again (in another order, in a large parallel batch) finds
  // the same rows with the same values.
  std::vector<int64_t> again(keys.rbegin(), keys.rend());
  for (int rep = 0; rep < 3; ++rep) again.insert(again.end(), keys.begin(), keys.end());
  std::vector<float> out2(again.size() * 4);
  ASSERT_TRUE(s->Pull(again, out2.data()).ok());
  EXPECT_EQ(s->rows(), 5000);
  for (size_t k = 0; k < again.size(); ++k) {
    float want[4];
    Init(again[k], want, 4);
    for (int c = 0; c < 4; ++c) ASSERT_EQ(out2[k * 4 + c], want[c]);
  }
}

// Several threads push +1 to the same rows; the sums are exact.
TEST(RowStore, ConcurrentPushesSumExactly) {
  for (auto& s : BothStores(2000, 8)) {
    constexpr int kThreads = 4, kRounds = 50;
    std::vector<int64_t> keys;
    for (int64_t k = 0; k < 2000; k += 2) keys.push_back(k);
    for (int64_t k = 0; k < 2000; k += 3) keys.push_back(k);  // some rows twice per batch
    std::vector<float> ones(keys.size() * 8, 1.0f);
    std::vector<float> before(keys.size() * 8);
    ASSERT_TRUE(s->Pull(keys, before.data()).ok());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int r = 0; r < kRounds; ++r) ASSERT_TRUE(s->Push(keys, ones.data(), {}).ok());
      });
    }
    for (auto& t : threads) t.join();
    std::vector<float> after(keys.size() * 8);
    ASSERT_TRUE(s->Pull(keys, after.data()).ok());
    for (size_t k = 0; k < keys.size(); ++k) {
      int64_t times = (keys[k] % 2 == 0) + (keys[k] % 3 == 0);
      EXPECT_EQ(after[k * 8], before[k * 8] + kThreads * kRounds * times) << "row " << keys[k];
    }
  }
}

// A row is written whole under its stripe's lock: a reader never sees a mix
// of two writes.
TEST(RowStore, RowsAreNeverReadHalfUpdated) {
  for (auto& s : BothStores(64, 256)) {
    std::vector<int64_t> keys(64);
    for (int64_t k = 0; k < 64; ++k) keys[k] = k;
    std::vector<float> zeros(64 * 256, 0.0f);
    ASSERT_TRUE(s->Push(keys, zeros.data(), {UpdateRule::kAssign}).ok());
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      std::vector<float> v(64 * 256);
      for (int round = 1; !stop; ++round) {
        std::fill(v.begin(), v.end(), static_cast<float>(round));
        if (!s->Push(keys, v.data(), {UpdateRule::kAssign}).ok()) break;
      }
    });
    std::vector<float> out(64 * 256);
    int torn = 0;
    for (int i = 0; i < 2000 && torn == 0; ++i) {
      ASSERT_TRUE(s->Pull(keys, out.data()).ok());
      for (int64_t k = 0; k < 64; ++k) {
        const float* row = out.data() + k * 256;
        torn += !std::all_of(row, row + 256, [&](float x) { return x == row[0]; });
      }
    }
    stop = true;
    writer.join();
    EXPECT_EQ(torn, 0) << "a row mixed two writes";
  }
}

TEST(HashStore, MemoryPerRowOfWidth64IsWithinAQuarterOfThePayload) {
  auto s = NewHashStore(64, [](int64_t, float* out) { std::fill(out, out + 64, 0.0f); });
  constexpr int64_t kRows = 200000;
  std::vector<int64_t> keys(kRows);
  for (int64_t k = 0; k < kRows; ++k) keys[k] = k * 2654435761 % (int64_t{1} << 40);
  std::vector<float> out(kRows * 64);
  ASSERT_TRUE(s->Pull(keys, out.data()).ok());
  ASSERT_EQ(s->rows(), kRows);
  double ratio = static_cast<double>(s->bytes()) / (kRows * 64 * sizeof(float));
  RecordProperty("bytes_per_payload_byte", std::to_string(ratio));
  EXPECT_LE(ratio, 1.25);
  EXPECT_GE(ratio, 1.0);
}

}  // namespace
}  // namespace rigel::ps
