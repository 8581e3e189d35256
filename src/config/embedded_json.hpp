#pragma once
// The JSON files compiled into the binary (core/embedded_files.hpp) that one folder holds: the
// presets and checked-in profiles each loader lists and finds by name.
#include <string>
#include <string_view>
#include <vector>

#include "core/embedded_files.hpp"

namespace moesim::config {

struct EmbeddedJson {
  std::string name;  ///< the file's stem, the name it is asked for by
  const EmbeddedFile* file = nullptr;
};

/// The embedded files `dir`NAME.json (`dir` ends in '/'; sub-folders left out), sorted by name.
[[nodiscard]] std::vector<EmbeddedJson> embedded_json_in(std::string_view dir);
/// The text of the built-in file at `path` (relative to the repository root); InternalError when the
/// build did not embed it (a checked-in data file every installed moesim carries).
[[nodiscard]] std::string builtin_file_text(std::string_view path);
/// Their names, sorted.
[[nodiscard]] std::vector<std::string> embedded_json_names(std::string_view dir);

}  // namespace moesim::config
