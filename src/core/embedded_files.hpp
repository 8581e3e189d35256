#pragma once
// Data files compiled into the binary (see cmake/embed_files.cmake): model presets, GPU specs and
// cluster presets, each keeping its "source" field, so that `build/moesim` runs from any directory.
#include <span>
#include <string_view>

namespace moesim {

struct EmbeddedFile {
  std::string_view path;     ///< relative to the repository root, e.g. "src/model/presets/mixtral-8x7b.json"
  std::string_view content;  ///< the file's bytes
};

/// Every embedded file, sorted by path. Defined in the generated moesim_data library.
[[nodiscard]] std::span<const EmbeddedFile> embedded_files();

}  // namespace moesim
