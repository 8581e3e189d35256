#include "config/report_inputs.hpp"

#include <filesystem>

#include "config/json_reader.hpp"
#include "config/scenario_loader.hpp"
#include "core/error.hpp"

namespace moesim::config {

std::optional<Scenario> scenario_of_document(std::string_view text, const std::string& path) {
  try {
    const Json doc = parse_json_text(std::string(text), path);
    const Json* scenario = nullptr;
    if (doc.contains("scenario")) scenario = &doc.at("scenario");
    if (doc.contains("request") && doc.at("request").contains("scenario")) scenario = &doc.at("request").at("scenario");
    if (!scenario) return std::nullopt;
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    return parse_scenario_spec(*scenario, path, dir);
  } catch (const InputError&) {
    // The document itself is checked by the report writer; a scenario echo that no longer loads
    // (a moved topology file) only costs the page its topology graph.
    return std::nullopt;
  }
}

}  // namespace moesim::config
