#include "report/fit_json.hpp"

#include <nlohmann/json.hpp>

namespace moesim::report {

std::string fit_record_to_json_text(const FitRecord& rec) {
  using Json = nlohmann::ordered_json;
  Json constants = Json::array();
  for (const FittedConstant& c : rec.constants) {
    Json constant{{"name", c.name}};
    if (c.name == kFrameworkOpSeconds) {
      constant["host"] = std::string(name_of(hw::kHostKindNames, c.host));
    } else {
      constant["architecture"] = c.architecture;
    }
    constant.update(Json{
        {"value", c.value},
        {"search", Json{{"from", c.search_from}, {"to", c.search_to}, {"resolution", c.resolution}}},
        {"fitted_on", Json{{"mape_percent", 100.0 * c.mape}, {"bias_percent", 100.0 * c.bias}, {"points", c.points}}},
        {"reference", Json{{"value", c.reference}, {"source", c.reference_source}}},
    });
    constants.push_back(constant);
  }
  const Json doc{
      {"schema", kFittedSchema},
      {"command", rec.command},
      {"data", Json{{"file", rec.data_file}, {"fnv1a64", rec.data_fnv1a}, {"points", rec.data_points}}},
      {"fidelity", rec.fidelity},
      {"objective", rec.objective},
      {"constants", constants},
  };
  return doc.dump(2) + "\n";
}

}  // namespace moesim::report
