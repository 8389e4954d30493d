// Cluster key files and the `rigel keygen` command.
#include "transport/auth/keyfile.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>

namespace rigel::transport {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/rigel-keyfile-test-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? d : "/tmp";
}

unsigned ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st.st_mode & 0777;
}

struct RunResult {
  int code;
  std::string out;
};

RunResult Rigel(const std::string& args) {
  std::string cmd = std::string(RIGEL_BIN_DIR) + "/rigel " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 512> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(KeyFileTest, WriteReadRoundTripWithPrivateMode) {
  std::string path = TempDir() + "/cluster.key";
  auto key = GenerateClusterKey();
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->public_key.size(), 40u);
  ASSERT_TRUE(WriteKeyFile(path, *key, false).ok());
  EXPECT_EQ(ModeOf(path), 0600u);
  auto back = ReadKeyFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->public_key, key->public_key);
  EXPECT_EQ(back->secret_key, key->secret_key);

  auto other = GenerateClusterKey();
  Status exists = WriteKeyFile(path, *other, false);
  EXPECT_EQ(exists.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadKeyFile(path)->public_key, key->public_key);  // untouched
  ASSERT_TRUE(WriteKeyFile(path, *other, true).ok());
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(ReadKeyFile(path)->public_key, other->public_key);
}

TEST(KeyFileTest, FilesReadableByOthersAreRefused) {
  std::string path = TempDir() + "/cluster.key";
  ASSERT_TRUE(WriteKeyFile(path, *GenerateClusterKey(), false).ok());
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  Status st = ReadKeyFile(path).status();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("chmod 600"), std::string::npos) << st.message();
  EXPECT_EQ(ReadKeyFile(path + ".missing").status().code(), StatusCode::kNotFound);
}

TEST(KeyFileTest, MalformedKeyFilesAreRejectedWithTheLine) {
  ClusterKey k = *GenerateClusterKey();
  ClusterKey k2 = *GenerateClusterKey();
  struct Case {
    std::string text, expect;
  } cases[] = {
      {"public-key = " + k.public_key + "\n", "needs both"},
      {"# only a comment\n", "needs both"},
      {"public-key = " + k.public_key + "\nsecret-key = short\n", "f:2:"},
      {"public-key abc\n", "f:1: expected"},  // (Z85 keys may contain '=')
      {"colour = blue\n", "unknown setting"},
      {"public-key = " + k.public_key + "\npublic-key = " + k.public_key + "\n", "given twice"},
      {"public-key = " + k.public_key + "\nsecret-key = " + k2.secret_key + "\n",
       "does not belong"},
      {"public-key = " + std::string(40, '"') + "\n", "Z85"},
  };
  for (const Case& c : cases) {
    Status st = ParseKeyFile(c.text, "f").status();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << st.message();
  }
  auto ok = ParseKeyFile(
      "\n  # c\r\npublic-key=" + k.public_key + "  \r\nsecret-key =" + k.secret_key + "\n", "f");
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

TEST(KeyFileTest, KeygenCommandWritesAndProtectsTheFile) {
  std::string path = TempDir() + "/cluster.key";
  RunResult made = Rigel("keygen -o " + path);
  ASSERT_EQ(made.code, 0) << made.out;
  EXPECT_NE(made.out.find(path), std::string::npos) << made.out;
  EXPECT_EQ(ModeOf(path), 0600u);
  auto key = ReadKeyFile(path);
  ASSERT_TRUE(key.ok()) << key.status().ToString();

  RunResult again = Rigel("keygen -o " + path);
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.out.find("already exists"), std::string::npos) << again.out;
  EXPECT_EQ(ReadKeyFile(path)->secret_key, key->secret_key);

  RunResult forced = Rigel("keygen --force -o " + path);
  ASSERT_EQ(forced.code, 0) << forced.out;
  EXPECT_NE(ReadKeyFile(path)->secret_key, key->secret_key);

  EXPECT_EQ(Rigel("keygen").code, 2);  // -o is required
  EXPECT_EQ(Rigel("keygen -o /nonexistent/dir/k").code, 1);
}

}  // namespace
}  // namespace rigel::transport
