// Status and StatusOr<T>: the error type that crosses every Rigel boundary.
//
// A Status is either OK or carries a code and a human-readable message. Messages
// for user-facing errors are complete sentences fragments in the form the CLI
// prints ("FILE:LINE:COL: error: ..." for program errors, "FILE:LINE: ..." for
// data errors). Both types are value types; they are not thread-safe to mutate
// concurrently but may be copied freely across threads.
#ifndef RIGEL_COMMON_STATUS_H_
#define RIGEL_COMMON_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace rigel {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: program text, flags, data files
  kNotFound,         // a file or name that does not exist
  kOutOfRange,       // an index outside its bounds at run time
  kFailedPrecondition,
  kUnimplemented,    // a backend that cannot do what was asked
  kUnavailable,      // hardware or peer not present
  kInternal,         // a bug in Rigel
  kIoError,
};

// Returns a short lower-case name for `code` ("invalid argument", ...).
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "code: message", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }

// Holds either a T or a non-OK Status. Accessing value() of an error is a
// programmer error (asserted in debug builds).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& s) : v_(s) { assert(!s.ok()); }  // NOLINT: implicit by design
  StatusOr(Status&& s) : v_(std::move(s)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT
  StatusOr(const T& v) : v_(v) {}                  // NOLINT
  StatusOr(T&& v) : v_(std::move(v)) {}            // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }
  const T& value() const& { assert(ok()); return std::get<T>(v_); }
  T& value() & { assert(ok()); return std::get<T>(v_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace rigel

#define RIGEL_CONCAT_INNER_(a, b) a##b
#define RIGEL_CONCAT_(a, b) RIGEL_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define RIGEL_RETURN_IF_ERROR(expr)         \
  do {                                      \
    ::rigel::Status _rigel_st = (expr);     \
    if (!_rigel_st.ok()) return _rigel_st;  \
  } while (0)

// `RIGEL_ASSIGN_OR_RETURN(auto x, F())` binds the value of a StatusOr or
// returns its error from the enclosing function.
#define RIGEL_ASSIGN_OR_RETURN(lhs, expr) \
  RIGEL_ASSIGN_OR_RETURN_IMPL_(RIGEL_CONCAT_(_rigel_so_, __LINE__), lhs, expr)
#define RIGEL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

#endif  // RIGEL_COMMON_STATUS_H_
