#include "config/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>
#include <utility>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/format.hpp"

namespace moesim::config {

namespace {

// Every moesim input nests a few levels (a scenario's /moe/routing/histogram is the deepest, at 4);
// 64 is far above any of them and far below what a recursive walk of the value could not handle.
constexpr int kMaxJsonDepth = 64;

// Watches nlohmann's parse events for what the parser itself accepts but moesim refuses: a key given
// twice in one object (nlohmann keeps the last, silently) and nesting deeper than kMaxJsonDepth (a
// file of 100,000 '[' would later overflow the stack of any recursive walk: a dump for a message,
// a destructor). It keeps the JSON path of the value being parsed so the error can name it.
class ParseWatch {
 public:
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        count_array_element();
        if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
          throw InputError(path(), "", "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                           "at most " + std::to_string(kMaxJsonDepth) + " nested arrays and objects");
        }
        frames_.push_back(Frame{event == Json::parse_event_t::object_start, {}, -1, {}});
        break;
      case Json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw InputError(path(), "", "duplicate key '" + f.key + "' (JSON parsers disagree on which value wins)",
                           "each key once per object");
        }
        break;
      }
      case Json::parse_event_t::value: count_array_element(); break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end: frames_.pop_back(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object = false;
    std::string key;          ///< the object's current key
    std::int64_t index = -1;  ///< the array's current element
    std::unordered_set<std::string> keys;
  };
  void count_array_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  [[nodiscard]] std::string path() const {
    std::string p;
    for (const Frame& f : frames_) p += "/" + (f.object ? f.key : std::to_string(f.index));
    return p.empty() ? "/" : p;
  }
  std::vector<Frame> frames_;
};

}  // namespace

Json parse_json_text(const std::string& text, const std::string& file) {
  try {
    ParseWatch watch;
    return Json::parse(text, std::ref(watch));
  } catch (InputError& e) {
    throw std::move(e.in_file(file));
  } catch (const Json::parse_error& e) {
    // nlohmann reports a byte offset; people read lines and columns.
    std::size_t line = 1, column = 1;
    const std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: " prefix:
    // the line and column are ours.
    if (auto pos = what.find(": "); pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError("", "", "malformed JSON (line " + std::to_string(line) + ", column " + std::to_string(column) +
                                 "): " + what)
        .in_file(file);
  } catch (const Json::out_of_range& e) {
    // A number beyond double's range (1e999): nlohmann gives no position.
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError("", "", "malformed JSON: " + what).in_file(file);
  }
}

std::string dump_text(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json load_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

std::string describe_value(const Json& v) {
  std::string s = dump_text(v);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string describe_type(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

namespace {
[[noreturn]] void wrong_type(const Json& v, const std::string& path, const std::string& expected) {
  throw InputError(path, describe_value(v), "expected " + expected + ", got " + describe_type(v));
}
std::string int_range_text(IntRange r) {
  if (r.max == std::numeric_limits<std::int32_t>::max()) return "integers >= " + std::to_string(r.min);
  return "integers from " + std::to_string(r.min) + " to " + std::to_string(r.max);
}
}  // namespace

std::int64_t to_int(const Json& v, const std::string& path, IntRange range) {
  std::int64_t out = 0;
  if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
  } else if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw InputError(path, describe_value(v), "integer too large", int_range_text(range));
    }
    out = static_cast<std::int64_t>(u);
  } else if (v.is_number_float()) {
    // 4096.0 is accepted as 4096; 4096.5 is not an integer.
    const double d = v.get<double>();
    if (std::floor(d) != d || std::abs(d) > 9.0e15) wrong_type(v, path, "an integer");
    out = static_cast<std::int64_t>(d);
  } else {
    wrong_type(v, path, "an integer");
  }
  if (out < range.min || out > range.max) {
    throw InputError(path, describe_value(v), "out of range", int_range_text(range));
  }
  return out;
}

double to_number(const Json& v, const std::string& path, NumberRange range) {
  if (!v.is_number()) wrong_type(v, path, "a number");
  const double d = v.get<double>();
  const bool below = range.min_exclusive ? !(d > range.min) : !(d >= range.min);
  if (!std::isfinite(d) || below || d > range.max) {
    std::string allowed = std::string(range.min_exclusive ? "numbers > " : "numbers >= ") + format_number(range.min);
    if (range.max != std::numeric_limits<double>::max()) allowed += " and <= " + format_number(range.max);
    throw InputError(path, describe_value(v), "out of range", allowed);
  }
  return d;
}

ObjectReader::ObjectReader(const Json& value, std::string path, std::vector<std::string> allowed_keys)
    : value_(value), path_(std::move(path)) {
  if (!value_.is_object()) {
    throw InputError(path_, describe_value(value_), "expected an object, got " + describe_type(value_));
  }
  std::sort(allowed_keys.begin(), allowed_keys.end());
  for (const auto& item : value_.items()) {
    if (!std::binary_search(allowed_keys.begin(), allowed_keys.end(), item.key())) {
      throw InputError(path_of(item.key()), "", "unknown key '" + item.key() + "'", join(allowed_keys));
    }
  }
}

bool ObjectReader::has(std::string_view key) const { return value_.contains(std::string(key)); }

const Json* ObjectReader::get(std::string_view key) const {
  auto it = value_.find(std::string(key));
  return it == value_.end() ? nullptr : &*it;
}

std::string ObjectReader::path_of(std::string_view key) const {
  // JSON Pointer escaping (RFC 6901) so odd keys still give a valid path.
  std::string escaped;
  for (char c : key) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return path_ + "/" + escaped;
}

std::int64_t ObjectReader::require_int(std::string_view key, IntRange range) const {
  const Json* v = get(key);
  if (!v) throw InputError(path_of(key), "", "required field is missing", int_range_text(range));
  return to_int(*v, path_of(key), range);
}

std::optional<std::int64_t> ObjectReader::optional_int(std::string_view key, IntRange range) const {
  const Json* v = get(key);
  if (!v || v->is_null()) return std::nullopt;
  return to_int(*v, path_of(key), range);
}

std::int64_t ObjectReader::get_int(std::string_view key, std::int64_t fallback, IntRange range) const {
  return optional_int(key, range).value_or(fallback);
}

double ObjectReader::require_number(std::string_view key, NumberRange range) const {
  const Json* v = get(key);
  if (!v) throw InputError(path_of(key), "", "required field is missing");
  return to_number(*v, path_of(key), range);
}

std::optional<double> ObjectReader::optional_number(std::string_view key, NumberRange range) const {
  const Json* v = get(key);
  if (!v || v->is_null()) return std::nullopt;
  return to_number(*v, path_of(key), range);
}

double ObjectReader::get_number(std::string_view key, double fallback, NumberRange range) const {
  return optional_number(key, range).value_or(fallback);
}

std::optional<bool> ObjectReader::optional_bool(std::string_view key) const {
  const Json* v = get(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_boolean()) wrong_type(*v, path_of(key), "a boolean (true or false)");
  return v->get<bool>();
}

bool ObjectReader::get_bool(std::string_view key, bool fallback) const { return optional_bool(key).value_or(fallback); }

std::string ObjectReader::require_string(std::string_view key) const {
  const Json* v = get(key);
  if (!v) throw InputError(path_of(key), "", "required field is missing");
  if (!v->is_string()) wrong_type(*v, path_of(key), "a string");
  return v->get<std::string>();
}

std::string ObjectReader::get_string(std::string_view key, std::string fallback) const {
  const Json* v = get(key);
  if (!v || v->is_null()) return fallback;
  if (!v->is_string()) wrong_type(*v, path_of(key), "a string");
  return v->get<std::string>();
}

std::string ObjectReader::get_enum(std::string_view key, std::string fallback,
                                   const std::vector<std::string>& allowed) const {
  const Json* v = get(key);
  if (!v || v->is_null()) return fallback;
  if (!v->is_string()) {
    throw InputError(path_of(key), describe_value(*v), "expected a string, got " + describe_type(*v), join(allowed));
  }
  auto s = v->get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    throw InputError(path_of(key), describe_value(*v), "unknown value" + did_you_mean(s, allowed), join(allowed));
  }
  return s;
}

std::string ObjectReader::require_enum(std::string_view key, const std::vector<std::string>& allowed) const {
  if (!has(key)) throw InputError(path_of(key), "", "required field is missing", join(allowed));
  return get_enum(key, "", allowed);
}

bool ObjectReader::require_bool(std::string_view key) const {
  const auto v = optional_bool(key);
  if (!v) throw InputError(path_of(key), "", "required field is missing", "true, false");
  return *v;
}

std::string ObjectReader::require_nonempty_string(std::string_view key, std::string_view rule) const {
  std::string s = require_string(key);
  if (s.empty()) throw InputError(path_of(key), "\"\"", std::string(rule));
  return s;
}

std::string json_quoted(const std::string& s) { return dump_text(Json(s)); }

}  // namespace moesim::config
