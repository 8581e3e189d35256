#include "config/builtin_scenarios.hpp"

#include <filesystem>

#include "config/scenario_loader.hpp"
#include "core/embedded_files.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/format.hpp"

namespace moesim::config {
namespace {
constexpr std::string_view kPrefix = "src/scenario/builtin/";
constexpr std::string_view kSuffix = ".json";
}  // namespace

std::vector<std::string> builtin_scenario_names() {
  std::vector<std::string> names;
  for (const auto& f : embedded_files()) {
    if (f.path.substr(0, kPrefix.size()) == kPrefix && f.path.size() > kPrefix.size() + kSuffix.size()) {
      names.emplace_back(f.path.substr(kPrefix.size(), f.path.size() - kPrefix.size() - kSuffix.size()));
    }
  }
  return names;
}

std::optional<std::string_view> builtin_scenario_text(const std::string& name) {
  const std::string path = std::string(kPrefix) + name + std::string(kSuffix);
  for (const auto& f : embedded_files()) {
    if (f.path == path) return f.content;
  }
  return std::nullopt;
}

std::optional<Scenario> load_builtin_scenario(const std::string& name) {
  const auto text = builtin_scenario_text(name);
  if (!text) return std::nullopt;
  const std::string label = "builtin:" + name;
  return parse_scenario(parse_json_text(std::string(*text), label), label, std::filesystem::current_path());
}

Scenario load_scenario_argument(const std::string& arg) {
  std::error_code ec;
  if (arg == kStdStream || std::filesystem::exists(arg, ec)) return load_scenario_file(arg);
  if (auto s = load_builtin_scenario(arg)) return *s;
  throw InputError("", "", "file not found, and not a built-in scenario" + did_you_mean(arg, builtin_scenario_names()),
                   join(builtin_scenario_names()))
      .in_file(arg);
}

}  // namespace moesim::config
