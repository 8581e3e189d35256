#include "config/embedded_json.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"

namespace moesim::config {

std::vector<EmbeddedJson> embedded_json_in(std::string_view dir) {
  constexpr std::string_view kSuffix = ".json";
  std::vector<EmbeddedJson> out;
  for (const EmbeddedFile& f : embedded_files()) {
    const std::string_view p = f.path;
    if (p.size() <= dir.size() + kSuffix.size() || !p.starts_with(dir) || !p.ends_with(kSuffix)) continue;
    const std::string_view stem = p.substr(dir.size(), p.size() - dir.size() - kSuffix.size());
    if (stem.find('/') == std::string_view::npos) out.push_back({std::string(stem), &f});
  }
  std::sort(out.begin(), out.end(), [](const EmbeddedJson& a, const EmbeddedJson& b) { return a.name < b.name; });
  return out;
}

std::string builtin_file_text(std::string_view path) {
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path == path) return std::string(f.content);
  }
  throw InternalError("a built-in data file is missing from this build: " + std::string(path));
}

std::vector<std::string> embedded_json_names(std::string_view dir) {
  std::vector<std::string> names;
  for (EmbeddedJson& f : embedded_json_in(dir)) names.push_back(std::move(f.name));
  return names;
}

}  // namespace moesim::config
