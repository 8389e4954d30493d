// libFuzzer target for the front end: any byte string, fed to CompileText as
// the text of a .rgl program, must come back as a Status (an error
// diagnostic or a compiled program), never a crash, hang, leak or sanitizer
// report. Run by `scripts/test.sh --sanitize`, seeded from examples/*.rgl and
// tests/fuzz/seeds/parser/, with the dictionary tests/fuzz/rgl.dict.
//
// Leading lines "#set NAME=VALUE" (comments to the parser) also become
// `--set` overrides, so the fuzzer exercises those too; a compiled program is
// dumped with ir::Print, which `rigel dump-ir` runs on the same IR.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/compile.h"

namespace {

// Inputs past this size only slow the fuzzer down; the grammar's interesting
// cases are all small.
constexpr size_t kMaxInputBytes = 64 * 1024;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return 0;
  static const std::string kFilename = "fuzz.rgl";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  rigel::frontend::CompileOptions options;
  constexpr std::string_view kSetPrefix = "#set ";
  for (size_t pos = 0; text.substr(pos).starts_with(kSetPrefix);) {
    const size_t begin = pos + kSetPrefix.size();
    const size_t end = std::min(text.find('\n', begin), text.size());
    auto set = rigel::frontend::ParseSetFlag(std::string(text.substr(begin, end - begin)));
    if (set.ok()) options.sets.push_back(*set);
    pos = std::min(end + 1, text.size());
  }
  auto result = rigel::frontend::CompileText(text, kFilename, options);
  // An error must say what is wrong: an empty message is a bug too.
  if (!result.ok() && result.status().message().empty()) __builtin_trap();
  if (result.ok() && rigel::ir::Print(*result).empty()) __builtin_trap();
  return 0;
}
