// RIGEL_CHECK: programmer invariants only. User errors are Status values.
// A failed check prints the condition and location to stderr and aborts.
#ifndef RIGEL_COMMON_CHECK_H_
#define RIGEL_COMMON_CHECK_H_

namespace rigel::internal {
[[noreturn]] void CheckFailed(const char* cond, const char* file, int line, const char* msg);
}  // namespace rigel::internal

#define RIGEL_CHECK(cond)                                                          \
  do {                                                                             \
    if (!(cond)) ::rigel::internal::CheckFailed(#cond, __FILE__, __LINE__, "");   \
  } while (0)
#define RIGEL_CHECK_MSG(cond, msg)                                                 \
  do {                                                                             \
    if (!(cond)) ::rigel::internal::CheckFailed(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)

#endif  // RIGEL_COMMON_CHECK_H_
