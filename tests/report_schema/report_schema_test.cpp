// Every JSON document moesim writes for the examples validates against its schema in
// reports/schemas/ (documented in docs/reports.md), and every field a schema names is documented.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "schema_validator.hpp"

using namespace moesim;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

fs::path out_dir() {
  const fs::path d = test::binary_dir() / "report-schema";
  fs::create_directories(d);
  return d;
}

Json run_to_json(const std::string& args, const std::string& name) {
  const fs::path file = out_dir() / (name + ".json");
  const auto r = test::run_command(test::moesim_binary() + " " + args + " -q --json '" + file.string() + "'", test::source_dir().string());
  REQUIRE_MESSAGE(r.exit_code == 0, args << "\n" << r.err);
  return Json::parse(test::slurp(file.string()));
}

// Every property name under "properties" anywhere in a schema.
void property_names(const Json& s, std::set<std::string>& out) {
  if (s.is_object()) {
    if (s.contains("properties")) {
      for (const auto& [k, v] : s["properties"].items()) out.insert(k);
    }
    for (const auto& [k, v] : s.items()) property_names(v, out);
  } else if (s.is_array()) {
    for (const auto& v : s) property_names(v, out);
  }
}

}  // namespace

TEST_CASE("the examples' results validate against moesim.result/1 at both fidelities") {
  test::SchemaValidator v(test::source_dir() / "reports" / "schemas");
  for (const char* s : {"mixtral-8x7b-h100-64", "esm2-15b-moe-h200", "custom-moe-lognormal-gb200"}) {
    for (const char* fidelity : {"simulation", "estimate"}) {
      CAPTURE(std::string(s));
      CAPTURE(std::string(fidelity));
      const Json doc = run_to_json(std::string("simulate ") + s + " --fidelity " + fidelity, std::string(s) + "-" + fidelity);
      CHECK_MESSAGE(v.validate(doc, "moesim.result-1.schema.json").empty(), v.validate(doc, "moesim.result-1.schema.json"));
      if (std::string(fidelity) == "simulation") CHECK(doc.contains("simulation"));
    }
  }
}

TEST_CASE("plans validate against moesim.plan/1, with and without skew sensitivity") {
  test::SchemaValidator v(test::source_dir() / "reports" / "schemas");
  const Json skew = run_to_json("plan plan-mixtral-8x7b-h100-64 --top 3", "plan-skew");
  CHECK(!skew.at("skew_sensitivity").empty());
  CHECK_MESSAGE(v.validate(skew, "moesim.plan-1.schema.json").empty(), v.validate(skew, "moesim.plan-1.schema.json"));
  const Json plain = run_to_json("plan plan-mixtral-8x7b-h100-64 --no-skew", "plan");
  CHECK_MESSAGE(v.validate(plain, "moesim.plan-1.schema.json").empty(), v.validate(plain, "moesim.plan-1.schema.json"));
}

TEST_CASE("the validator catches a missing field, a wrong type and an out-of-range value") {
  test::SchemaValidator v(test::source_dir() / "reports" / "schemas");
  Json doc = run_to_json("simulate mixtral-8x7b-h100-64 --fidelity estimate", "broken-base");
  doc.erase("step_time_s");
  doc["memory"]["per_stage"][0]["peak_op"] = 3;
  doc["mfu"] = 1.5;
  doc["scenario"]["parallel"].erase("tp");
  const std::string errors = v.validate(doc, "moesim.result-1.schema.json");
  CHECK(errors.find("/: missing required field \"step_time_s\"") != std::string::npos);
  CHECK(errors.find("/memory/per_stage/0/peak_op: expected type") != std::string::npos);
  CHECK(errors.find("/mfu: 1.5 > maximum") != std::string::npos);
  CHECK(errors.find("/scenario/parallel: missing required field \"tp\"") != std::string::npos);
}

TEST_CASE("every field the schemas name is documented") {
  std::string docs = test::slurp((test::source_dir() / "docs" / "reports.md").string()) +
                     test::slurp((test::source_dir() / "docs" / "planner.md").string());
  test::SchemaValidator v(test::source_dir() / "reports" / "schemas");
  for (const char* file : {"moesim.result-1.schema.json", "moesim.plan-1.schema.json"}) {
    std::set<std::string> names;
    property_names(v.load(file), names);
    for (const auto& n : names) {
      CAPTURE(std::string(file));
      // Documented as `name`, `name[]` or `name.sub`.
      const bool documented = docs.find("`" + n + "`") != std::string::npos || docs.find("`" + n + "[") != std::string::npos ||
                              docs.find("`" + n + ".") != std::string::npos;
      CHECK_MESSAGE(documented, "field `" << n << "` is not documented in docs/reports.md or docs/planner.md");
    }
  }
}
