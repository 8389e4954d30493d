// The relaxed rows' write-back caches (ps/cache.h) against real parameter
// servers in this process (ps/row_versions.h, ps/service_rows.cc): what a
// worker reads lacks at most N merges by other workers, it reads its own
// writes, every delta is merged exactly by a flush, partial caches evict and
// stay exact, and a non-finite delta is refused with nothing applied.
#include "ps/cache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/param_init.h"
#include "ps/row_versions.h"
#include "tests/harness/ps_cluster.h"

namespace rigel::ps {
namespace {

using testing::PsCluster;

// One parameter "w" of `rows` rows of width 4, hash-sharded, zeros; and a
// range-sharded 1-D "b" of 1 row, which only the last server holds.
cluster::ClusterSetup CacheSetup(int servers, int workers, int64_t rows) {
  cluster::ClusterSetup s;
  s.servers = servers;
  s.workers = workers;
  cluster::ParamSpec w;
  w.decl.name = "w";
  w.decl.width = 4;
  w.rows = rows;
  w.hash = true;
  cluster::ParamSpec b;
  b.decl.name = "b";
  b.rows = 1;
  s.params = {w, b};
  return s;
}

// Whether the tests' caches hold "w" in part (their own cells, reached
// through the slot map) or in a whole local copy; RowCacheTest sets it.
bool g_in_part = false;

// A worker: its local copy of "w" (none in part), its cache, its exchange.
struct Worker {
  Worker(PsCluster& c, const cluster::ClusterSetup& s, int rank, int64_t capacity, uint32_t bound)
      : map(s.MakeShardMap().value()),
        values(g_in_part ? 0 : static_cast<size_t>(s.params[0].rows * 4), 0.0f),
        cache(0, map, g_in_part ? nullptr : values.data(), capacity, bound),
        exchange(c.worker(rank), s.servers, {}) {}

  // Where the kernel finds `row` (held, in part).
  float* Row(int64_t row) {
    const int64_t at = cache.in_part() ? cache.cells()[row] : row;
    EXPECT_GE(at, 0) << "row " << row << " is not held";
    return cache.data() + at * 4;
  }
  // What the kernel does for a write of `delta` to every column of `row`
  // (kernel::RowTracker with the cache's cells).
  void Write(int64_t row, float delta) {
    float* v = Row(row);
    for (int c = 0; c < 4; ++c) v[c] += delta;
    const int32_t cell = cache.cells()[row];
    if (cell < 0) return;
    if (++cache.updates()[cell] == cache.push_bound()) cache.due()->push_back(row);
  }
  float At(int64_t row) { return Row(row)[0]; }
  Status Exchange(uint32_t staleness, std::vector<int64_t> next = {}, bool flush = false) {
    RowCache* c = &cache;
    std::vector<std::span<const int64_t>> rows = {next};
    RIGEL_RETURN_IF_ERROR(
        exchange.Send(std::span<RowCache* const>(&c, 1), rows, flush, staleness, 0));
    return exchange.Receive();
  }

  cluster::ShardMap map;
  std::vector<float> values;
  RowCache cache;
  RowExchange exchange;
};

// Every RowCache test runs with the values in a whole local copy and held
// in part.
class RowCacheTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { g_in_part = GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Values, RowCacheTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("InPart") : std::string("Whole");
                         });

TEST(RowVersions, HoldersLackOtherWorkersMergesAndAreDueOncePastTheBound) {
  RowVersions v(3);
  v.Hold(5, 1);
  v.Hold(5, 2);
  v.Merge(5, 0, false, 1);
  EXPECT_EQ(v.version(5), 1u);
  EXPECT_EQ(v.lacks(5, 1), 1);
  EXPECT_EQ(v.lacks(5, 0), -1);  // not a holder
  EXPECT_TRUE(v.TakeDue(1, 1).empty());
  v.Merge(5, 2, false, 1);  // worker 2's own merge: it lacks nothing more
  EXPECT_EQ(v.lacks(5, 2), 1);
  EXPECT_EQ(v.TakeDue(1, 1), std::vector<int64_t>{5});  // lacks 2 > 1
  EXPECT_EQ(v.lacks(5, 1), 0);                          // sent: lacks none
  EXPECT_TRUE(v.TakeDue(1, 1).empty());                 // listed once
  // A replica merge (hot rows, summed by a collective) is lacked by no one.
  v.Merge(5, 0, true, 1);
  EXPECT_EQ(v.version(5), 3u);
  EXPECT_EQ(v.lacks(5, 1), 0);
  // Another bound: the rows are scanned again.
  v.Merge(5, 0, false, 1);
  EXPECT_EQ(v.TakeDue(2, 0), std::vector<int64_t>{5});
  v.Drop(5, 1);
  v.Merge(5, 0, false, 0);
  EXPECT_TRUE(v.TakeDue(1, 0).empty());
  EXPECT_EQ(v.Held(2), std::vector<int64_t>{5});
  v.DropAll(2);
  EXPECT_TRUE(v.Held(2).empty());
}

TEST_P(RowCacheTest, AReadLacksAtMostNMergesAndKeepsItsOwnWrites) {
  const cluster::ClusterSetup s = CacheSetup(2, 2, 50);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  for (uint32_t n : {1u, 3u}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    Worker a(c, s, 0, 50, 1), b(c, s, 1, 50, 1);
    ASSERT_TRUE(a.Exchange(n).ok());  // whole: every row fetched
    ASSERT_TRUE(b.Exchange(n).ok());
    ASSERT_EQ(a.cache.held(), 50);
    const float start = b.At(7);
    b.cache.set_push_bound(1000);
    b.Write(7, 100);  // b's own write: pending until the flush
    int lacked_most = 0;
    for (int merge = 1; merge <= 12; ++merge) {
      a.Write(7, 1);  // push bound 1: one merge per exchange
      ASSERT_TRUE(a.Exchange(n).ok());
      ASSERT_TRUE(b.Exchange(n).ok());
      // b reads start + 100 (its own) + the merges it has of a's.
      const int has = static_cast<int>(b.At(7) - start - 100);
      EXPECT_GE(has, merge - static_cast<int>(n)) << "merge " << merge;
      EXPECT_LE(has, merge);
      lacked_most = std::max(lacked_most, merge - has);
    }
    EXPECT_EQ(lacked_most, static_cast<int>(n));  // the bound is reached, not exceeded
    EXPECT_GT(b.cache.stats().refreshed, 0u);
    // The flush merges b's own write; a then sees all of it.
    ASSERT_TRUE(b.Exchange(n, {}, /*flush=*/true).ok());
    a.Write(8, 1);
    ASSERT_TRUE(a.Exchange(0).ok());  // N = 0 from here: everything comes
    EXPECT_EQ(a.At(7), start + 100 + 12);
  }
}

TEST_P(RowCacheTest, EveryDeltaIsMergedExactlyAndTheAuditFindsTheBound) {
  const cluster::ClusterSetup s = CacheSetup(2, 3, 200);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  for (uint32_t n : {1u, 4u}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    std::vector<std::unique_ptr<Worker>> w;
    for (int r = 0; r < 3; ++r) {
      w.push_back(std::make_unique<Worker>(c, s, r, 200, 1 + 3 * r));
      w.back()->exchange.set_audit(true);
    }
    for (auto& x : w) ASSERT_TRUE(x->Exchange(n).ok());
    std::vector<float> start(200);
    for (int64_t r = 0; r < 200; ++r) start[r] = w[0]->At(r);
    std::vector<double> added(200, 0);
    std::mt19937 rng(42 + n);
    for (int step = 0; step < 300; ++step) {
      Worker& x = *w[rng() % 3];
      for (int k = 0; k < 20; ++k) {
        // Hot rows (0..9) and cold ones, integer deltas: sums are exact.
        const int64_t row = rng() % 4 ? rng() % 10 : rng() % 200;
        const float d = static_cast<float>(static_cast<int>(rng() % 7) - 3);
        x.Write(row, d);
        added[row] += d;
      }
      ASSERT_TRUE(x.Exchange(n).ok());
    }
    for (auto& x : w) ASSERT_TRUE(x->Exchange(n, {}, /*flush=*/true).ok());
    for (auto& x : w) {
      EXPECT_LE(x->cache.stats().max_lag, static_cast<int64_t>(n));
      EXPECT_GT(x->cache.stats().audited, 0u);
    }
    // Some read did lag (the audit measures something), and the servers hold
    // start + every delta, exactly.
    int64_t most = 0;
    for (auto& x : w) most = std::max(most, x->cache.stats().max_lag);
    EXPECT_GT(most, 0);
    Worker check(c, s, 0, 200, 1);
    ASSERT_TRUE(check.Exchange(n).ok());  // fetches every row afresh
    for (int64_t r = 0; r < 200; ++r) {
      ASSERT_EQ(check.At(r), start[r] + static_cast<float>(added[r])) << "row " << r;
    }
  }
}

TEST_P(RowCacheTest, APartialCacheEvictsAndStaysExact) {
  const cluster::ClusterSetup s = CacheSetup(2, 2, 64);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Worker a(c, s, 0, 8, 3), b(c, s, 1, 64, 3);
  EXPECT_FALSE(a.cache.whole());
  ASSERT_TRUE(b.Exchange(1).ok());
  std::vector<double> added(64, 0);
  std::mt19937 rng(7);
  std::vector<int64_t> next;
  for (int step = 0; step < 200; ++step) {
    next.clear();
    for (int k = 0; k < 4; ++k) next.push_back(rng() % 64);
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    ASSERT_TRUE(a.Exchange(1, next).ok());  // fetches what it lacks
    for (int64_t row : next) {
      ASSERT_TRUE(a.cache.holds(row));
      a.Write(row, 1);
      added[row] += 1;
    }
    b.Write(step % 64, 2);
    added[step % 64] += 2;
    ASSERT_TRUE(b.Exchange(1).ok());
    EXPECT_LE(a.cache.held(), 8 + 4);
  }
  ASSERT_TRUE(a.Exchange(1, {}, true).ok());
  ASSERT_TRUE(b.Exchange(1, {}, true).ok());
  EXPECT_GT(a.cache.stats().evicted, 0u);
  Worker check(c, s, 0, 64, 1);
  ASSERT_TRUE(check.Exchange(1).ok());
  for (int64_t r = 0; r < 64; ++r) EXPECT_EQ(check.At(r), static_cast<float>(added[r])) << r;
}

// A cache that could hold every row but is told to fetch only the rows the
// exchanges name (a large table most of whose rows nothing touches) holds
// those rows and no others, evicts nothing, and its deltas still all merge.
TEST_P(RowCacheTest, FetchingTouchedRowsOnlyHoldsNoOtherRow) {
  const cluster::ClusterSetup s = CacheSetup(2, 1, 64);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Worker a(c, s, 0, 64, 1);
  EXPECT_TRUE(a.cache.whole());
  a.cache.FetchTouchedRowsOnly();
  EXPECT_FALSE(a.cache.whole());
  ASSERT_TRUE(a.Exchange(1, {3, 9}).ok());
  EXPECT_EQ(a.cache.held(), 2);
  EXPECT_TRUE(a.cache.holds(3));
  EXPECT_FALSE(a.cache.holds(4));
  a.Write(3, 1);
  a.Write(9, 2);
  ASSERT_TRUE(a.Exchange(1, {9, 40}).ok());
  EXPECT_EQ(a.cache.held(), 3);
  ASSERT_TRUE(a.Exchange(1, {}, true).ok());
  EXPECT_EQ(a.cache.stats().evicted, 0u);
  Worker check(c, s, 0, 64, 1);  // whole: fetches every row
  ASSERT_TRUE(check.Exchange(1).ok());
  EXPECT_EQ(check.cache.held(), 64);
  EXPECT_EQ(check.At(3), 1.0f);
  EXPECT_EQ(check.At(9), 2.0f);
  EXPECT_EQ(check.At(40), 0.0f);
}

// Held in part, a cache's memory is its cells: the rows fetched, and a cell
// for each excluded (hot) row, which keeps its values across a Reset and is
// never fetched, pushed or evicted.
TEST(RowCacheInPart, HoldsOnlyTheRowsItFetchedAndItsExcludedRows) {
  const cluster::ClusterSetup s = CacheSetup(2, 1, 100000);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  g_in_part = true;
  Worker a(c, s, 0, 4, 1);
  ASSERT_TRUE(a.cache.in_part());
  EXPECT_FALSE(a.cache.whole());
  ASSERT_TRUE(a.Exchange(1, {5, 77777}).ok());
  EXPECT_EQ(a.cache.held(), 2);
  EXPECT_TRUE(a.cache.holds(77777));
  EXPECT_EQ(a.cache.cells()[4], -1);
  a.Write(77777, 3);
  const std::vector<int64_t> hot = {5, 9};
  a.cache.Exclude(hot);  // 5 held, 9 not: both get (keep) a cell
  EXPECT_TRUE(a.cache.excluded(5));
  EXPECT_TRUE(a.cache.excluded(9));
  EXPECT_FALSE(a.cache.holds(5));
  EXPECT_EQ(a.cache.held(), 3);
  a.Row(9)[0] = 42;  // the hot rows' values are the caller's
  a.Write(9, 1);     // counted nowhere that matters: never pushed
  // More rows than the capacity: the cache evicts 77777 (pushing its delta)
  // but never an excluded row.
  ASSERT_TRUE(a.Exchange(1, {1, 2, 3}).ok());
  ASSERT_TRUE(a.Exchange(1, {10, 11, 12}).ok());
  EXPECT_FALSE(a.cache.holds(77777));
  EXPECT_GT(a.cache.stats().evicted, 0u);
  EXPECT_EQ(a.At(9), 43.0f);
  a.cache.Reset();
  EXPECT_EQ(a.cache.held(), 2);  // the excluded rows' cells
  EXPECT_EQ(a.At(9), 43.0f);
  ASSERT_TRUE(a.Exchange(1, {9, 77777}, /*flush=*/true).ok());
  EXPECT_TRUE(a.cache.holds(77777));
  EXPECT_EQ(a.At(77777), 3.0f);  // the evicted row's delta was merged
  EXPECT_FALSE(a.cache.holds(9));
  EXPECT_EQ(a.At(9), 43.0f);  // not fetched over
}

TEST_P(RowCacheTest, ANonFiniteDeltaIsRefusedAndNothingOfItsMessageApplied) {
  const cluster::ClusterSetup s = CacheSetup(1, 1, 10);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Worker a(c, s, 0, 10, 1);
  ASSERT_TRUE(a.Exchange(1).ok());
  a.Write(2, 5);
  a.Write(3, std::numeric_limits<float>::infinity());
  Status st = a.Exchange(1);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("'w' row 3 is not finite"), std::string::npos) << st.message();
  Worker check(c, s, 0, 10, 1);
  ASSERT_TRUE(check.Exchange(1).ok());
  EXPECT_EQ(check.At(2), 0.0f);  // row 2's delta travelled in the same message
}

TEST_P(RowCacheTest, ReplicatedMergesReachTheServersAndNoHolderLacksThem) {
  const cluster::ClusterSetup s = CacheSetup(2, 2, 10);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Worker a(c, s, 0, 10, 1), b(c, s, 1, 10, 1);
  ASSERT_TRUE(a.Exchange(0).ok());
  ASSERT_TRUE(b.Exchange(0).ok());
  {
    // "b" has its one row on server 1: server 0 answers its section empty.
    float value = 0;
    RowCache bias(1, a.map, &value, 1, 1);
    RowCache* both[] = {&a.cache, &bias};
    std::vector<std::span<const int64_t>> none(2);
    ASSERT_TRUE(a.exchange.Send(both, none, false, 0, 1).ok());
    ASSERT_TRUE(a.exchange.Receive().ok());
    EXPECT_TRUE(bias.holds(0));
  }
  const std::vector<int64_t> rows = {1, 4};
  const std::vector<float> deltas(8, 2.5f);
  ASSERT_TRUE(a.exchange.PushReplicated(0, 4, a.map, rows, deltas).ok());
  ASSERT_TRUE(b.Exchange(0).ok());
  EXPECT_EQ(b.cache.stats().refreshed, 0u);  // N = 0, yet nothing was due
  Worker check(c, s, 0, 10, 1);
  ASSERT_TRUE(check.Exchange(0).ok());
  EXPECT_EQ(check.At(4), 2.5f);
}

// Scaled merges (SetScaledRows): a scaled row's delta pushed while its copy
// lacked L merges by other workers is added times 1 / (1 + L) and comes
// back to the pusher; other rows' deltas are added whole.
TEST_P(RowCacheTest, AScaledRowsDeltaCountsOneOverOnePlusTheMergesItLacked) {
  const cluster::ClusterSetup s = CacheSetup(2, 3, 10);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Worker a(c, s, 0, 10, 1), b(c, s, 1, 10, 1), d(c, s, 2, 10, 1);
  const std::vector<int64_t> scaled = {3};
  for (Worker* w : {&a, &b, &d}) {
    w->cache.SetScaledRows(scaled);
    ASSERT_TRUE(w->Exchange(5).ok());  // whole: every row held; N = 5, nothing refreshed
  }
  // Each writes 1.0 to rows 3 (scaled) and 7 (not), from the same copy.
  for (Worker* w : {&a, &b, &d}) {
    w->Write(3, 1.0f);
    w->Write(7, 1.0f);
  }
  ASSERT_TRUE(a.Exchange(5).ok());  // lacks nothing: 1
  ASSERT_TRUE(b.Exchange(5).ok());  // lacks a's merge: 1/2
  ASSERT_TRUE(d.Exchange(5).ok());  // lacks two: 1/3
  Worker check(c, s, 0, 10, 1);
  ASSERT_TRUE(check.Exchange(5).ok());
  EXPECT_FLOAT_EQ(check.At(3), 1.0f + 0.5f + 1.0f / 3);
  EXPECT_FLOAT_EQ(check.At(7), 3.0f);
  // A scaled push came back to its pusher: d's copy is the servers' value.
  EXPECT_FLOAT_EQ(d.At(3), 1.0f + 0.5f + 1.0f / 3);
  EXPECT_FLOAT_EQ(d.At(7), 1.0f);  // not scaled, not due: d's own write alone
}

// A push age pushes a row whose count is short of the push bound once its
// first unpushed update is that many exchanges old.
TEST_P(RowCacheTest, APushAgeMergesARowShortOfItsBound) {
  const cluster::ClusterSetup s = CacheSetup(1, 2, 10);
  auto started = PsCluster::Start(s);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Worker a(c, s, 0, 10, /*bound=*/100);
  a.cache.set_push_age(2);
  auto step = [&](int64_t n) {
    RowCache* p = &a.cache;
    std::vector<std::span<const int64_t>> none(1);
    ASSERT_TRUE(
        a.exchange.Send(std::span<RowCache* const>(&p, 1), none, false, 1, static_cast<uint64_t>(n))
            .ok());
    ASSERT_TRUE(a.exchange.Receive().ok());
  };
  step(0);
  // The kernel's tracker lists a row whose count leaves 0.
  a.Row(2)[0] += 1.0f;
  if (++a.cache.updates()[a.cache.cells()[2]] == 1) a.cache.started()->push_back(2);
  step(1);  // started at exchange 1
  EXPECT_EQ(a.cache.stats().pushed, 0u);
  step(2);
  EXPECT_EQ(a.cache.stats().pushed, 0u);
  step(3);  // 1 + 2 <= 3: pushed, one update short of 100
  EXPECT_EQ(a.cache.stats().pushed, 1u);
  EXPECT_EQ(a.cache.updates()[a.cache.cells()[2]], 0u);
  step(9);  // nothing left to push
  EXPECT_EQ(a.cache.stats().pushed, 1u);
}

}  // namespace
}  // namespace rigel::ps
