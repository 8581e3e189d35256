#pragma once
// A small JSON Schema (draft-7) validator for the tests: the subset reports/schemas/*.json use —
// type, const, enum, required, properties, additionalProperties, items, minItems, minimum, maximum,
// exclusiveMinimum, anyOf and $ref ("#/definitions/x", "file.json" or "file.json#/definitions/x",
// files read from one folder). Any other keyword is an error, so a schema cannot silently ask for
// a check this validator does not make.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace moesim::test {

class SchemaValidator {
 public:
  explicit SchemaValidator(std::filesystem::path folder) : folder_(std::move(folder)) {}

  /// Every violation of `doc` against schema file `file`, one per line with its JSON path; "" if valid.
  std::string validate(const nlohmann::json& doc, const std::string& file) {
    errors_.clear();
    check(doc, load(file), file, "");
    return errors_;
  }

  const nlohmann::json& load(const std::string& file) {
    auto it = files_.find(file);
    if (it == files_.end()) {
      std::ifstream in(folder_ / file);
      if (!in) throw std::runtime_error("schema file not found: " + (folder_ / file).string());
      it = files_.emplace(file, nlohmann::json::parse(in)).first;
    }
    return it->second;
  }

 private:
  static bool is_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    if (t == "integer") return v.is_number_integer();
    if (t == "number") return v.is_number();
    throw std::runtime_error("unknown type in schema: " + t);
  }

  void fail(const std::string& path, const std::string& what) { errors_ += (path.empty() ? "/" : path) + ": " + what + "\n"; }

  void check(const nlohmann::json& v, const nlohmann::json& s, const std::string& file, const std::string& path) {
    static const std::set<std::string> known{"$schema", "$id", "title", "description", "type", "const", "enum", "required",
                                             "properties", "additionalProperties", "items", "minItems", "minimum", "maximum",
                                             "exclusiveMinimum", "anyOf", "$ref", "definitions"};
    for (const auto& [k, _] : s.items()) {
      if (!known.count(k)) throw std::runtime_error("schema keyword the test validator does not implement: " + k);
    }
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"];
      const auto hash = ref.find('#');
      const std::string target_file = hash == 0 ? file : ref.substr(0, hash);
      const nlohmann::json& root = load(target_file);
      const std::string pointer = hash == std::string::npos ? "" : ref.substr(hash + 1);
      check(v, pointer.empty() ? root : root.at(nlohmann::json::json_pointer(pointer)), target_file, path);
    }
    if (s.contains("type")) {
      bool ok = false;
      for (const auto& t : s["type"].is_array() ? s["type"] : nlohmann::json::array({s["type"]})) ok = ok || is_type(v, t);
      if (!ok) return fail(path, "expected type " + s["type"].dump() + ", got " + v.dump().substr(0, 60));
    }
    if (s.contains("const") && v != s["const"]) fail(path, "expected " + s["const"].dump() + ", got " + v.dump());
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) {
      fail(path, "value " + v.dump() + " not in " + s["enum"].dump());
    }
    if (v.is_number()) {
      const double x = v.get<double>();
      if (s.contains("minimum") && x < s["minimum"].get<double>()) fail(path, v.dump() + " < minimum " + s["minimum"].dump());
      if (s.contains("maximum") && x > s["maximum"].get<double>()) fail(path, v.dump() + " > maximum " + s["maximum"].dump());
      if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) fail(path, v.dump() + " <= " + s["exclusiveMinimum"].dump());
    }
    if (v.is_object()) {
      for (const auto& r : s.value("required", nlohmann::json::array())) {
        if (!v.contains(r.get<std::string>())) fail(path, "missing required field \"" + r.get<std::string>() + "\"");
      }
      const auto props = s.value("properties", nlohmann::json::object());
      for (const auto& [k, val] : v.items()) {
        if (props.contains(k)) {
          check(val, props[k], file, path + "/" + k);
        } else if (s.contains("additionalProperties")) {
          const auto& ap = s["additionalProperties"];
          if (ap.is_boolean() && !ap.get<bool>()) fail(path, "unexpected field \"" + k + "\"");
          if (ap.is_object()) check(val, ap, file, path + "/" + k);
        }
      }
    }
    if (v.is_array()) {
      if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>()) fail(path, "fewer than " + s["minItems"].dump() + " items");
      if (s.contains("items")) {
        for (std::size_t i = 0; i < v.size(); ++i) check(v[i], s["items"], file, path + "/" + std::to_string(i));
      }
    }
    if (s.contains("anyOf")) {
      const std::string before = errors_;
      bool any = false;
      for (const auto& alt : s["anyOf"]) {
        errors_.clear();
        check(v, alt, file, path);
        any = any || errors_.empty();
      }
      errors_ = before;
      if (!any) fail(path, "matches none of anyOf");
    }
  }

  std::filesystem::path folder_;
  std::map<std::string, nlohmann::json> files_;
  std::string errors_;
};

}  // namespace moesim::test
