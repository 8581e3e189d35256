#pragma once
// Strict reading of JSON objects: every key must be known, every value of the right type and range,
// and every error names the JSON path, the value found, the rule and the allowed values. All loaders
// of config/ (scenario, model, HF config.json, GPU and system presets) are written with it.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/value_range.hpp"

namespace moesim::config {

using Json = nlohmann::json;

/// Parses JSON text. Malformed text → InputError "malformed JSON: ... (line L, column C)" with `file`.
[[nodiscard]] Json parse_json_text(const std::string& text, const std::string& file);
/// Reads and parses a file (missing file, unreadable, malformed → InputError naming the file).
[[nodiscard]] Json load_json_file(const std::string& path);

/// Compact text of a JSON value for messages, cut to about 60 characters.
[[nodiscard]] std::string describe_value(const Json& v);
/// `v` as compact JSON text for a message or a key; bytes that are not UTF-8 (a CSV field, a file
/// name) become U+FFFD instead of throwing.
[[nodiscard]] std::string dump_text(const Json& v);
/// A string as it would be written in JSON, quotes included ("\"hgx-h100\""), for messages.
[[nodiscard]] std::string json_quoted(const std::string& s);
/// "an integer", "a string", ... for "expected X, got Y" messages.
[[nodiscard]] std::string describe_type(const Json& v);

/// One JSON object read strictly. The constructor checks that `value` is an object and that every key
/// is in `allowed_keys` (else InputError "unknown key 'k'" listing the allowed keys). Getters mark
/// nothing; they only convert, so reading order does not matter.
class ObjectReader {
 public:
  ObjectReader(const Json& value, std::string path, std::vector<std::string> allowed_keys);

  [[nodiscard]] bool has(std::string_view key) const;
  /// Raw access; nullptr when absent.
  [[nodiscard]] const Json* get(std::string_view key) const;
  /// "/parallel/tp" for key "tp" under "/parallel".
  [[nodiscard]] std::string path_of(std::string_view key) const;
  [[nodiscard]] const std::string& path() const { return path_; }

  [[nodiscard]] std::int64_t require_int(std::string_view key, IntRange range = {}) const;
  [[nodiscard]] std::optional<std::int64_t> optional_int(std::string_view key, IntRange range = {}) const;
  [[nodiscard]] std::int64_t get_int(std::string_view key, std::int64_t fallback, IntRange range = {}) const;

  [[nodiscard]] double require_number(std::string_view key, NumberRange range = {}) const;
  [[nodiscard]] std::optional<double> optional_number(std::string_view key, NumberRange range = {}) const;
  [[nodiscard]] double get_number(std::string_view key, double fallback, NumberRange range = {}) const;

  [[nodiscard]] bool get_bool(std::string_view key, bool fallback) const;
  [[nodiscard]] std::optional<bool> optional_bool(std::string_view key) const;

  [[nodiscard]] std::string require_string(std::string_view key) const;
  [[nodiscard]] std::string get_string(std::string_view key, std::string fallback) const;
  /// A string that must be one of `allowed`.
  [[nodiscard]] std::string get_enum(std::string_view key, std::string fallback,
                                     const std::vector<std::string>& allowed) const;
  /// As get_enum, for a field that must be present (the message lists `allowed`).
  [[nodiscard]] std::string require_enum(std::string_view key, const std::vector<std::string>& allowed) const;
  [[nodiscard]] bool require_bool(std::string_view key) const;
  /// A string that must be present and not empty; `rule` is the message when it is empty.
  [[nodiscard]] std::string require_nonempty_string(std::string_view key,
                                                    std::string_view rule = "must not be empty") const;

 private:
  const Json& value_;
  std::string path_;
};

/// Converts a JSON value to an integer in range, or throws naming `path`.
[[nodiscard]] std::int64_t to_int(const Json& v, const std::string& path, IntRange range = {});
[[nodiscard]] double to_number(const Json& v, const std::string& path, NumberRange range = {});

}  // namespace moesim::config
