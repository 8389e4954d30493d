// Reading JSON text: the one place Rigel parses JSON (plans, cuts, cluster
// setups, checkpoint files, machine constants, epoch logs). Writing JSON is
// nlohmann::json's own and may happen anywhere.
//
// ParseJson returns the document's root as a JsonValue: a read-only view of
// one value and of its path from the root ("loops[2].schedule.kind"). Every
// getter returns the value or InvalidArgument with a message
// "SOURCE: PATH: WHAT", for example
//   plan.json: loops[2].schedule.kind: expected a string, found a number (3)
//   manifest.json: seq: missing
// SOURCE is what the caller calls the text ("plan.json", "the scheduler's
// reply"); PATH is "(top level)" for the root. Nothing throws.
//
// Ownership: each JsonValue shares ownership of its document, so it stays
// valid after the value ParseJson returned and every other view are gone.
// A document never changes once parsed: distinct threads may read it and its
// views at once; a single JsonValue is not to be assigned while read.
#ifndef RIGEL_COMMON_JSON_READER_H_
#define RIGEL_COMMON_JSON_READER_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace rigel {

class JsonValue {
 public:
  // What the text is called, as given to ParseJson.
  const std::string& source() const;
  // Where this value is: "" for the root, "loops[2].schedule" below it.
  const std::string& path() const { return path_; }

  bool IsNull() const;
  bool IsBool() const;
  bool IsNumber() const;   // an integer or not
  bool IsInteger() const;  // written without a fraction or an exponent
  bool IsString() const;
  bool IsArray() const;
  bool IsObject() const;
  // The value's kind for messages: "null", "a boolean (true)", "a number
  // (1.5)", "a string (\"x\")" (long strings cut short), "a list", "an object".
  std::string Describe() const;

  // The value as a type. InvalidArgument naming the path when it is
  // another type: "expected an integer, found a string (\"2\")".
  StatusOr<std::string> AsString() const;
  // An integer in int64's range; 2.0 and 1e3 are not integers.
  StatusOr<int64_t> AsInt() const;
  // AsInt within [lo, hi]; else "X is outside LO..HI".
  StatusOr<int64_t> AsIntIn(int64_t lo, int64_t hi) const;
  // An integer in 0..2^64-1.
  StatusOr<uint64_t> AsUint() const;
  // Any number, as a double.
  StatusOr<double> AsDouble() const;
  StatusOr<bool> AsBool() const;
  // A list's elements, in order, with paths "PATH[i]".
  StatusOr<std::vector<JsonValue>> Elements() const;
  // An object's members in the order of the text, with paths "PATH.KEY".
  StatusOr<std::vector<std::pair<std::string, JsonValue>>> Members() const;

  // Members of an object. Has and Find are false and nullopt when this is
  // not an object; the getters then fail with "expected an object, found
  // ...", and with "PATH.KEY: missing" when the member is absent.
  bool Has(std::string_view key) const;
  std::optional<JsonValue> Find(std::string_view key) const;
  StatusOr<JsonValue> Get(std::string_view key) const;
  StatusOr<std::string> GetString(std::string_view key) const;
  StatusOr<int64_t> GetInt(std::string_view key) const;
  StatusOr<int64_t> GetIntIn(std::string_view key, int64_t lo, int64_t hi) const;
  StatusOr<uint64_t> GetUint(std::string_view key) const;
  StatusOr<double> GetDouble(std::string_view key) const;
  StatusOr<bool> GetBool(std::string_view key) const;
  StatusOr<std::vector<JsonValue>> GetArray(std::string_view key) const;
  StatusOr<JsonValue> GetObject(std::string_view key) const;  // a member that is an object

  // Optional members: `otherwise` when absent, an error when present with
  // another type (or when this is not an object).
  StatusOr<std::string> GetStringOr(std::string_view key, std::string otherwise) const;
  StatusOr<int64_t> GetIntOr(std::string_view key, int64_t otherwise) const;
  StatusOr<uint64_t> GetUintOr(std::string_view key, uint64_t otherwise) const;
  StatusOr<double> GetDoubleOr(std::string_view key, double otherwise) const;
  StatusOr<bool> GetBoolOr(std::string_view key, bool otherwise) const;

  // InvalidArgument "SOURCE: PATH: what", for the caller's own checks of
  // this value ("unknown schedule 'fast'").
  Status Error(std::string_view what) const;
  // The same for the member `key` of this value: "SOURCE: PATH.key: what".
  Status FieldError(std::string_view key, std::string_view what) const;

  // The value itself, to write it out or copy it into a document being
  // built. Include <nlohmann/json.hpp> to use it.
  const nlohmann::ordered_json& raw() const;

 private:
  struct Doc;
  friend StatusOr<JsonValue> ParseJson(std::string_view text, std::string_view source);

  JsonValue(std::shared_ptr<const Doc> doc, const nlohmann::ordered_json* node, std::string path)
      : doc_(std::move(doc)), node_(node), path_(std::move(path)) {}
  JsonValue Child(const nlohmann::ordered_json* node, std::string path) const {
    return JsonValue(doc_, node, std::move(path));
  }
  std::string MemberPath(std::string_view key) const;
  Status TypeError(std::string_view expected) const;

  std::shared_ptr<const Doc> doc_;
  const nlohmann::ordered_json* node_;  // inside *doc_
  std::string path_;
};

// Parses `text` (strict JSON: no comments, nothing after the value).
// `source` names it in messages. Syntax errors are InvalidArgument
// "SOURCE: not valid JSON at line L, column C: what the parser expected".
// Thread-safe.
StatusOr<JsonValue> ParseJson(std::string_view text, std::string_view source);

}  // namespace rigel

#endif  // RIGEL_COMMON_JSON_READER_H_
