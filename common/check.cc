#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace rigel::internal {

void CheckFailed(const char* cond, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "rigel: internal check failed at %s:%d: %s %s\n", file, line, cond, msg);
  std::abort();
}

}  // namespace rigel::internal
