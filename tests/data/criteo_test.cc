// data/load_criteo.cc: the Criteo layout read into libsvm-kind samples (a 0/1
// label; integer field i as feature i, ln(1 + count); categorical field k
// hashed into its bucket range), in one part or several.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/part_load.h"

namespace rigel::data {
namespace {

LibsvmOptions Criteo(int64_t buckets, bool shared = true) {
  LibsvmOptions o;
  o.format = LibsvmFormat::kCriteo;
  o.buckets = buckets;
  o.shared_buckets = shared;
  return o;
}

// A line of 40 fields: `ints` then `cats`, each "" for a missing value.
std::string Line(const std::string& label, std::vector<std::string> ints,
                 std::vector<std::string> cats) {
  ints.resize(kCriteoIntegers);
  cats.resize(kCriteoCategoricals);
  std::string out = label;
  for (const std::string& v : ints) out += "\t" + v;
  for (const std::string& v : cats) out += "\t" + v;
  return out + "\n";
}

StatusOr<Dataset> Parse(const std::string& text, const LibsvmOptions& o, int parts = 1) {
  return LoadInParts(text, "c.tsv", LoadSpec::Of(o), parts);
}

TEST(Criteo, IntegersAreLogCountsAndCategoricalsHashedBuckets) {
  const std::string text =
      Line("1", {"3", "", "0", "-2"}, {"68fd1e64", "", "80e26c9b"}) + Line("0", {}, {"68fd1e64"});
  auto d = Parse(text, Criteo(1000));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->kind, DataKind::kLibsvm);
  EXPECT_EQ(d->count, 2);
  EXPECT_EQ(d->labels, (std::vector<float>{1.0f, 0.0f}));
  // Every bucket is a feature, seen or not.
  EXPECT_EQ(d->dim, 13 + 1000);
  // Line 1: I1 = 3 (ln 4); I2 missing; 0 and -2 are no feature; two ids.
  ASSERT_EQ(d->feat_offset, (std::vector<int64_t>{0, 3, 4}));
  EXPECT_EQ(d->feat_index[0], 0);
  EXPECT_FLOAT_EQ(d->feat_value[0], std::log(4.0f));
  for (int k = 1; k < 4; ++k) {
    EXPECT_GE(d->feat_index[k], 13);
    EXPECT_LT(d->feat_index[k], 13 + 1000);
    EXPECT_EQ(d->feat_value[k], 1.0f);
  }
  // The same id in the same field is the same bucket.
  EXPECT_EQ(d->feat_index[1], d->feat_index[3]);
}

TEST(Criteo, OwnRangesSeparateTheFieldsAndSharedOnesMixThem) {
  // The same id in every categorical field.
  const std::vector<std::string> same(kCriteoCategoricals, "deadbeef");
  auto own = Parse(Line("1", {}, same), Criteo(50, /*shared=*/false));
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ(own->dim, 13 + 26 * 50);
  ASSERT_EQ(own->feat_index.size(), 26u);
  for (int k = 0; k < kCriteoCategoricals; ++k) {
    EXPECT_GE(own->feat_index[k], 13 + k * 50) << k;
    EXPECT_LT(own->feat_index[k], 13 + (k + 1) * 50) << k;
  }
  // Shared: the field is hashed with the id, so the 26 land on many buckets.
  auto shared = Parse(Line("1", {}, same), Criteo(1 << 20));
  ASSERT_TRUE(shared.ok());
  const std::set<int32_t> buckets(shared->feat_index.begin(), shared->feat_index.end());
  EXPECT_GT(buckets.size(), 20u);
}

TEST(Criteo, PartsGiveTheWholeLoadAndEmptyLinesAndCrlfAreFine) {
  std::string text;
  for (int n = 0; n < 200; ++n) {
    text += Line(n % 3 == 0 ? "1" : "0", {std::to_string(n), "", std::to_string(n % 7)},
                 {"a" + std::to_string(n % 11), "", "ff"});
  }
  auto whole = Parse(text, Criteo(4096));
  auto parts = Parse(text, Criteo(4096), 5);
  ASSERT_TRUE(whole.ok() && parts.ok());
  EXPECT_EQ(whole->count, 200);
  EXPECT_EQ(whole->feat_index, parts->feat_index);
  EXPECT_EQ(whole->feat_value, parts->feat_value);
  EXPECT_EQ(whole->feat_offset, parts->feat_offset);
  EXPECT_EQ(whole->labels, parts->labels);

  std::string crlf = Line("1", {"1"}, {"ab"});
  crlf.insert(crlf.size() - 1, "\r");
  auto d = Parse("\n" + crlf + "\r\n" + Line("0", {}, {}), Criteo(10));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->count, 2);
  EXPECT_EQ(d->feat_offset, (std::vector<int64_t>{0, 2, 2}));
}

void ExpectError(const StatusOr<Dataset>& r, const std::string& want) {
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
}

TEST(Criteo, ErrorsNameTheLineTheColumnAndWhatWasExpected) {
  ExpectError(Parse(Line("1", {}, {}) + "1\t2\t3\n", Criteo(10)),
              "c.tsv:2:6: error: expected a tab and field 4 of 40 (a label, 13 integer and 26 "
              "categorical fields), found end of line");
  ExpectError(Parse(Line("2", {}, {}), Criteo(10)),
              "c.tsv:1:1: error: expected a label of 0 or 1, found '2'");
  ExpectError(Parse(Line("", {}, {}), Criteo(10)),
              "c.tsv:1:1: error: expected a label of 0 or 1 (it may not be missing)");
  ExpectError(Parse(Line("1", {"x"}, {}), Criteo(10)),
              "c.tsv:1:3: error: expected an integer for integer field 1, found 'x'");
  ExpectError(Parse(Line("1", {}, {"12g4"}), Criteo(10)),
              "error: expected a hexadecimal id for categorical field 1 (8 hex digits in "
              "Criteo's files)");
  std::string extra = Line("1", {}, {});
  extra.insert(extra.size() - 1, "\tmore");
  ExpectError(Parse(extra, Criteo(10)), "error: expected the end of the line after 40 fields");
  ExpectError(Parse(Line("1", {}, {}), Criteo(0)),
              "c.tsv: error: criteo: buckets must be between 1");
  ExpectError(Parse(Line("1", {}, {}), Criteo(int64_t{1} << 27, /*shared=*/false)),
              "buckets must be between 1 and 82595524 with a range per field");
  EXPECT_TRUE(CheckCriteoOptions(Criteo(int64_t{1} << 26, false)).ok());
  EXPECT_TRUE(CheckCriteoOptions(Criteo(int64_t{1} << 30)).ok());
  EXPECT_FALSE(CheckCriteoOptions(Criteo(int64_t{1} << 31)).ok());
}

}  // namespace
}  // namespace rigel::data
