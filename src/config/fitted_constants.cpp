#include "config/fitted_constants.hpp"

#include <utility>

#include "config/enum_field.hpp"
#include "config/embedded_json.hpp"
#include "config/json_reader.hpp"
#include "core/error.hpp"

namespace moesim::config {
namespace {

constexpr NumberRange kSeconds{0.0, 1.0};
constexpr NumberRange kRate{0.0, 2.0};  // a share of the datasheet rate

/// The object under `key` (a missing one reads as null, which ObjectReader refuses naming the path).
ObjectReader section(const ObjectReader& r, std::string_view key, std::vector<std::string> keys) {
  static const Json kNull;
  const Json* v = r.get(key);
  return ObjectReader(v ? *v : kNull, r.path_of(key), std::move(keys));
}

FittedConstant read_constant(const Json& value, const std::string& path) {
  FittedConstant c;
  c.name = ObjectReader(value, path, {"name", "host", "architecture", "value", "search", "fitted_on", "reference"})
               .require_enum("name", {kFrameworkOpSeconds, kSustainedTensorRate});
  const bool host = c.name == kFrameworkOpSeconds;
  // A host constant names its host kind, an architecture constant its architecture, not both.
  const ObjectReader r(value, path,
                       {"name", host ? "host" : "architecture", "value", "search", "fitted_on", "reference"});
  if (host) {
    c.host = require_enum_value(r, "host", hw::kHostKindNames);
  } else {
    c.architecture = r.require_enum("architecture", {"ampere", "hopper", "blackwell"});
  }
  const NumberRange range = host ? kSeconds : kRate;
  c.value = r.require_number("value", range);
  const ObjectReader search = section(r, "search", {"from", "to", "resolution"});
  c.search_from = search.require_number("from", range);
  c.search_to = search.require_number("to", range);
  c.resolution = search.require_number("resolution", range);
  const ObjectReader on = section(r, "fitted_on", {"mape_percent", "bias_percent", "points"});
  c.mape = on.require_number("mape_percent", {0.0, 1e4}) / 100.0;
  c.bias = on.require_number("bias_percent", {-1e4, 1e4}) / 100.0;
  const Json* ids = on.get("points");
  if (!ids || !ids->is_array()) throw InputError(on.path_of("points"), ids ? describe_value(*ids) : "nothing", "must be an array of point ids", "");
  for (const Json& id : *ids) {
    if (!id.is_string()) throw InputError(on.path_of("points"), describe_value(id), "must hold strings", "");
    c.points.push_back(id.get<std::string>());
  }
  const ObjectReader reference = section(r, "reference", {"value", "source"});
  c.reference = reference.require_number("value", range);
  c.reference_source = reference.require_nonempty_string("source");
  return c;
}

}  // namespace

FitRecord parse_fit_record(const std::string& text, const std::string& file) {
  try {
    const Json doc = parse_json_text(text, file);
    const ObjectReader r(doc, "", {"schema", "command", "data", "fidelity", "objective", "constants"});
    (void)r.require_enum("schema", {kFittedSchema});
    FitRecord rec;
    rec.command = r.require_nonempty_string("command");
    const ObjectReader d = section(r, "data", {"file", "fnv1a64", "points"});
    rec.data_file = d.require_nonempty_string("file");
    rec.data_fnv1a = d.require_nonempty_string("fnv1a64");
    rec.data_points = d.require_int("points", {0, 1000000});
    rec.fidelity = r.require_enum("fidelity", {"estimate", "simulation"});
    rec.objective = r.require_nonempty_string("objective");
    const Json* constants = r.get("constants");
    if (!constants || !constants->is_array()) {
      throw InputError("/constants", constants ? describe_value(*constants) : "nothing", "must be an array", "");
    }
    for (std::size_t i = 0; i < constants->size(); ++i) {
      rec.constants.push_back(read_constant((*constants)[i], "/constants/" + std::to_string(i)));
    }
    return rec;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

const FitRecord& builtin_fit_record() {
  static const FitRecord record =
      parse_fit_record(builtin_file_text(kBuiltinFittedConstantsFile), kBuiltinFittedConstantsFile);
  return record;
}

hw::HostCosts host_costs_of(const FitRecord& record, const std::string& file) {
  hw::HostCosts costs;
  for (const auto& [kind, name] : hw::kHostKindNames) {
    bool found = false;
    for (const FittedConstant& c : record.constants) {
      if (c.name != kFrameworkOpSeconds || c.host != kind) continue;
      if (found) throw InputError("/constants", std::string(name), "framework_op_s is given twice for this host", "").in_file(file);
      costs.set(kind, c.value);
      found = true;
    }
    if (!found) throw InputError("/constants", std::string(name), "needs a framework_op_s for every host kind", "x86, grace").in_file(file);
  }
  return costs;
}

double fitted_tensor_rate(const std::string& architecture) {
  for (const FittedConstant& c : builtin_fit_record().constants) {
    if (c.name == kSustainedTensorRate && c.architecture == architecture) return c.value;
  }
  return 1.0;
}

const hw::HostCosts& fitted_host_costs() {
  static const hw::HostCosts costs = host_costs_of(builtin_fit_record(), kBuiltinFittedConstantsFile);
  return costs;
}

}  // namespace moesim::config
