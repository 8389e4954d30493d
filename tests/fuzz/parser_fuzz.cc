// libFuzzer target for the front end: any byte string, fed to CompileText as
// the text of a .rgl program, must come back as a Status (an error
// diagnostic or a compiled program), never a crash, hang, leak or sanitizer
// report. Run by `scripts/test.sh --sanitize`, seeded from examples/*.rgl.
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
  static const rigel::frontend::CompileOptions kOptions{};
  static const std::string kFilename = "fuzz.rgl";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto result = rigel::frontend::CompileText(text, kFilename, kOptions);
  // An error must say what is wrong: an empty message is a bug too.
  if (!result.ok() && result.status().message().empty()) __builtin_trap();
  return 0;
}
