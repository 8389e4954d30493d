// Helpers of the generator tests (gen_test.cc, gen_v2_test.cc): a fresh
// directory, splitting generated text, checking number formats, and reading a
// figure from a summary. They parse the bytes independently of the frontend
// loaders.
#ifndef RIGEL_TESTS_EXAMPLES_GEN_TEST_UTIL_H_
#define RIGEL_TESTS_EXAMPLES_GEN_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "examples/generators.h"

namespace rigel::examples::testing_util {

// A new empty directory under the test's temporary directory.
inline std::string TempDir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir =
      fs::path(testing::TempDir()) / ("rigel_gen_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// The lines of `text`, each ended by '\n' (a missing last one is a failure).
inline std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    EXPECT_NE(eol, std::string_view::npos) << "last line has no newline";
    if (eol == std::string_view::npos) eol = text.size();
    lines.push_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return lines;
}

inline std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (true) {
    size_t next = s.find(sep, pos);
    parts.push_back(s.substr(pos, next == std::string_view::npos ? next : next - pos));
    if (next == std::string_view::npos) return parts;
    pos = next + 1;
  }
}

inline bool IsUnsigned(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "-?D+.DDDD" with exactly `decimals` digits after the point.
inline bool IsFixed(std::string_view s, size_t decimals) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  size_t dot = s.find('.');
  return dot != std::string_view::npos && IsUnsigned(s.substr(0, dot)) &&
         s.size() - dot - 1 == decimals && IsUnsigned(s.substr(dot + 1));
}

inline double ToDouble(std::string_view s) { return std::strtod(std::string(s).c_str(), nullptr); }
inline int64_t ToInt(std::string_view s) { return std::atoll(std::string(s).c_str()); }

// The figure `name` of a generator's summary.
inline double Figure(const GenOutput& out, const std::string& name) {
  std::string text;
  for (const std::string& line : out.summary) text += line + "\n";
  StatusOr<double> v = SummaryValue(text, name);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : std::nan("");
}

}  // namespace rigel::examples::testing_util

#endif  // RIGEL_TESTS_EXAMPLES_GEN_TEST_UTIL_H_
