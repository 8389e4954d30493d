#include "common/status.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/file.h"
#include "common/hash.h"

namespace rigel {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd");
  return x / 2;
}

Status UseHalf(int x, int* out) {
  RIGEL_ASSIGN_OR_RETURN(*out, Half(x));
  return Status::Ok();
}

TEST(Status, OkAndError) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = NotFound("x.csv: no such file");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "not found: x.csv: no such file");
}

TEST(StatusOr, ValueAndPropagation) {
  int out = 0;
  EXPECT_TRUE(UseHalf(8, &out).ok());
  EXPECT_EQ(out, 4);
  Status st = UseHalf(3, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "odd");
}

TEST(Hash, DeterministicAndOrderSensitive) {
  EXPECT_EQ(HashCoords(1, 2, 3), HashCoords(1, 2, 3));
  EXPECT_NE(HashCoords(1, 2, 3), HashCoords(1, 3, 2));
  EXPECT_NE(HashCoords(1, 2, 3), HashCoords(2, 2, 3));
  double sum = 0;
  for (int i = 0; i < 10000; ++i) sum += UnitDouble(HashCoords(7, i));
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(File, ReadWriteAndResolve) {
  std::string path = testing::TempDir() + "/rigel_file_test.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "hello\n").ok());
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "hello\n");
  EXPECT_EQ(ReadFileToString(path + ".missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ResolveRelativeTo("examples/mf.rgl", "data/r.csv"), "examples/data/r.csv");
  EXPECT_EQ(ResolveRelativeTo("examples/mf.rgl", "/abs/r.csv"), "/abs/r.csv");
  EXPECT_EQ(ResolveRelativeTo("mf.rgl", "r.csv"), "r.csv");
}

TEST(File, DurableWritesReplaceWholeFilesAndNameTheirFailures) {
  const std::string dir = testing::TempDir() + "/rigel_file_durable";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteFileDurably(dir + "/a", "one\n").ok());
  ASSERT_TRUE(WriteFileDataDurably(dir + "/b", "two\n").ok());
  ASSERT_TRUE(WriteFileDataDurably(dir + "/b", "three\n").ok());
  ASSERT_TRUE(SyncDirectory(dir).ok());
  EXPECT_EQ(*ReadFileToString(dir + "/a"), "one\n");
  EXPECT_EQ(*ReadFileToString(dir + "/b"), "three\n");
  // No temporary is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 2);
  Status missing = SyncDirectory(dir + "/missing");
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_NE(missing.message().find(dir + "/missing"), std::string::npos) << missing.message();
  Status bad = WriteFileDataDurably(dir + "/missing/c", "x");
  EXPECT_EQ(bad.code(), StatusCode::kIoError);
  EXPECT_NE(bad.message().find(dir + "/missing/c"), std::string::npos) << bad.message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rigel
