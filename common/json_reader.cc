#include "common/json_reader.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

namespace rigel {

using Json = nlohmann::ordered_json;

// An ordered_json, so that Members() and a copy written back keep the
// order of the text (a plan's parameters are read in the order written).
struct JsonValue::Doc {
  Json tree;
  std::string source;
};

namespace {

// Strings longer than this are cut short in messages.
constexpr size_t kShownChars = 40;

// The parser's own account of a syntax error, and where it stopped. Used
// only on text the non-throwing parse refused, to say why without
// exceptions (sax_parse reports through parse_error and returns false).
class ErrorLocator : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const Json::exception& ex) override {
    position_ = position;
    what_ = ex.what();
    return false;
  }

  size_t position() const { return position_; }
  // nlohmann's message without its "[json.exception.parse_error.101] parse
  // error at line 1, column 2: " prefix: the position is ours to say.
  std::string what() const {
    std::string w = what_;
    if (size_t b = w.find("] "); w.rfind("[json.exception.", 0) == 0 && b != std::string::npos) {
      w.erase(0, b + 2);
    }
    if (w.rfind("parse error", 0) == 0) {
      if (size_t c = w.find(": "); c != std::string::npos) w.erase(0, c + 2);
    }
    return w.empty() ? "unexpected input" : w;
  }

 private:
  size_t position_ = 0;
  std::string what_;
};

Status SyntaxError(std::string_view text, std::string_view source) {
  ErrorLocator locator;
  static_cast<void>(Json::sax_parse(text.begin(), text.end(), &locator));
  // `position` counts the characters read, the offending one included.
  const size_t at = std::min(locator.position() > 0 ? locator.position() - 1 : 0, text.size());
  const std::string_view before = text.substr(0, at);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t newline = before.rfind('\n');
  const size_t column = newline == std::string_view::npos ? at + 1 : at - newline;
  return InvalidArgument(std::string(source) + ": not valid JSON at line " + std::to_string(line) +
                         ", column " + std::to_string(column) + ": " + locator.what());
}

}  // namespace

StatusOr<JsonValue> ParseJson(std::string_view text, std::string_view source) {
  auto doc = std::make_shared<JsonValue::Doc>();
  doc->source = source;
  doc->tree = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc->tree.is_discarded()) return SyntaxError(text, source);
  const Json* root = &doc->tree;
  return JsonValue(std::move(doc), root, "");
}

const std::string& JsonValue::source() const { return doc_->source; }
const Json& JsonValue::raw() const { return *node_; }

bool JsonValue::IsNull() const { return node_->is_null(); }
bool JsonValue::IsBool() const { return node_->is_boolean(); }
bool JsonValue::IsNumber() const { return node_->is_number(); }
bool JsonValue::IsInteger() const { return node_->is_number_integer(); }
bool JsonValue::IsString() const { return node_->is_string(); }
bool JsonValue::IsArray() const { return node_->is_array(); }
bool JsonValue::IsObject() const { return node_->is_object(); }

std::string JsonValue::Describe() const {
  switch (node_->type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return std::string("a boolean (") + (node_->get<bool>() ? "true" : "false") + ")";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number (" + node_->dump() + ")";
    case Json::value_t::string: {
      const std::string& s = node_->get_ref<const std::string&>();
      if (s.size() <= kShownChars) return "a string (" + node_->dump() + ")";
      // Cut before a character, not inside one: dump() refuses broken UTF-8.
      size_t n = kShownChars;
      while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
      return "a string (" + Json(s.substr(0, n)).dump() + "...)";
    }
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "an object";
    default:
      return "a binary value";
  }
}

Status JsonValue::Error(std::string_view what) const {
  return InvalidArgument(doc_->source + ": " + (path_.empty() ? "(top level)" : path_) + ": " +
                         std::string(what));
}

Status JsonValue::FieldError(std::string_view key, std::string_view what) const {
  return InvalidArgument(doc_->source + ": " + MemberPath(key) + ": " + std::string(what));
}

std::string JsonValue::MemberPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Status JsonValue::TypeError(std::string_view expected) const {
  return Error("expected " + std::string(expected) + ", found " + Describe());
}

StatusOr<std::string> JsonValue::AsString() const {
  if (!node_->is_string()) return TypeError("a string");
  return node_->get<std::string>();
}

StatusOr<int64_t> JsonValue::AsInt() const {
  if (!node_->is_number_integer()) return TypeError("an integer");
  // The parser keeps every non-negative integer unsigned, up to 2^64-1.
  if (node_->is_number_unsigned() &&
      node_->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Error("expected an integer in " + std::to_string(std::numeric_limits<int64_t>::min()) +
                 ".." + std::to_string(std::numeric_limits<int64_t>::max()) + ", found " +
                 node_->dump());
  }
  return node_->get<int64_t>();
}

StatusOr<int64_t> JsonValue::AsIntIn(int64_t lo, int64_t hi) const {
  RIGEL_ASSIGN_OR_RETURN(int64_t x, AsInt());
  if (x < lo || x > hi) {
    return Error(std::to_string(x) + " is outside " + std::to_string(lo) + ".." +
                 std::to_string(hi));
  }
  return x;
}

StatusOr<uint64_t> JsonValue::AsUint() const {
  if (!node_->is_number_unsigned()) return TypeError("a non-negative integer");
  return node_->get<uint64_t>();
}

StatusOr<double> JsonValue::AsDouble() const {
  if (!node_->is_number()) return TypeError("a number");
  return node_->get<double>();
}

StatusOr<bool> JsonValue::AsBool() const {
  if (!node_->is_boolean()) return TypeError("a boolean (true or false)");
  return node_->get<bool>();
}

StatusOr<std::vector<JsonValue>> JsonValue::Elements() const {
  if (!node_->is_array()) return TypeError("a list");
  std::vector<JsonValue> out;
  out.reserve(node_->size());
  for (size_t i = 0; i < node_->size(); ++i) {
    out.push_back(Child(&(*node_)[i], path_ + "[" + std::to_string(i) + "]"));
  }
  return out;
}

StatusOr<std::vector<std::pair<std::string, JsonValue>>> JsonValue::Members() const {
  if (!node_->is_object()) return TypeError("an object");
  std::vector<std::pair<std::string, JsonValue>> out;
  out.reserve(node_->size());
  for (auto it = node_->begin(); it != node_->end(); ++it) {
    out.emplace_back(it.key(), Child(&it.value(), MemberPath(it.key())));
  }
  return out;
}

bool JsonValue::Has(std::string_view key) const { return Find(key).has_value(); }

std::optional<JsonValue> JsonValue::Find(std::string_view key) const {
  if (!node_->is_object()) return std::nullopt;
  auto it = node_->find(std::string(key));
  if (it == node_->end()) return std::nullopt;
  return Child(&it.value(), MemberPath(key));
}

StatusOr<JsonValue> JsonValue::Get(std::string_view key) const {
  if (!node_->is_object()) return TypeError("an object");
  std::optional<JsonValue> v = Find(key);
  if (!v) return FieldError(key, "missing");
  return *std::move(v);
}

namespace {

// Get(key), then `as` on the member.
template <typename T, typename As>
StatusOr<T> GetAs(const JsonValue& o, std::string_view key, As as) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue v, o.Get(key));
  return as(v);
}

// The member `key` through `as`, or `otherwise` when absent.
template <typename T, typename As>
StatusOr<T> GetAsOr(const JsonValue& o, std::string_view key, T otherwise, As as) {
  if (!o.IsObject()) return o.Get(key).status();  // "expected an object"
  std::optional<JsonValue> v = o.Find(key);
  if (!v) return otherwise;
  return as(*v);
}

}  // namespace

StatusOr<std::string> JsonValue::GetString(std::string_view key) const {
  return GetAs<std::string>(*this, key, [](const JsonValue& v) { return v.AsString(); });
}
StatusOr<int64_t> JsonValue::GetInt(std::string_view key) const {
  return GetAs<int64_t>(*this, key, [](const JsonValue& v) { return v.AsInt(); });
}
StatusOr<int64_t> JsonValue::GetIntIn(std::string_view key, int64_t lo, int64_t hi) const {
  return GetAs<int64_t>(*this, key, [&](const JsonValue& v) { return v.AsIntIn(lo, hi); });
}
StatusOr<uint64_t> JsonValue::GetUint(std::string_view key) const {
  return GetAs<uint64_t>(*this, key, [](const JsonValue& v) { return v.AsUint(); });
}
StatusOr<double> JsonValue::GetDouble(std::string_view key) const {
  return GetAs<double>(*this, key, [](const JsonValue& v) { return v.AsDouble(); });
}
StatusOr<bool> JsonValue::GetBool(std::string_view key) const {
  return GetAs<bool>(*this, key, [](const JsonValue& v) { return v.AsBool(); });
}
StatusOr<std::vector<JsonValue>> JsonValue::GetArray(std::string_view key) const {
  return GetAs<std::vector<JsonValue>>(*this, key, [](const JsonValue& v) { return v.Elements(); });
}
StatusOr<JsonValue> JsonValue::GetObject(std::string_view key) const {
  return GetAs<JsonValue>(*this, key, [](const JsonValue& v) -> StatusOr<JsonValue> {
    if (!v.IsObject()) return v.TypeError("an object");
    return v;
  });
}

StatusOr<std::string> JsonValue::GetStringOr(std::string_view key, std::string otherwise) const {
  return GetAsOr<std::string>(*this, key, std::move(otherwise),
                              [](const JsonValue& v) { return v.AsString(); });
}
StatusOr<int64_t> JsonValue::GetIntOr(std::string_view key, int64_t otherwise) const {
  return GetAsOr<int64_t>(*this, key, otherwise, [](const JsonValue& v) { return v.AsInt(); });
}
StatusOr<uint64_t> JsonValue::GetUintOr(std::string_view key, uint64_t otherwise) const {
  return GetAsOr<uint64_t>(*this, key, otherwise, [](const JsonValue& v) { return v.AsUint(); });
}
StatusOr<double> JsonValue::GetDoubleOr(std::string_view key, double otherwise) const {
  return GetAsOr<double>(*this, key, otherwise, [](const JsonValue& v) { return v.AsDouble(); });
}
StatusOr<bool> JsonValue::GetBoolOr(std::string_view key, bool otherwise) const {
  return GetAsOr<bool>(*this, key, otherwise, [](const JsonValue& v) { return v.AsBool(); });
}

}  // namespace rigel
