#pragma once
// What the two GPU-side binaries (moesim-calibrate, moesim-validate-run) share around their work: one
// exit-code convention (0 written; 1 a runtime failure; 2 bad usage or input, nothing written) and the
// checks made before any GPU work, so `moesim calibrate` and `moesim validate` can read both alike.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.hpp"

namespace moesim::calibrate {

/// Prints "<program>: <message>" on stderr and returns 2 (bad usage or input; nothing written).
inline int usage_error(std::string_view program, const std::string& message) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(program.size()), program.data(), message.c_str());
  return 2;
}

/// The message for an --out file whose folder does not exist (nullopt: it does). Checked before any
/// measurement so that a run of minutes does not end without a place to write.
inline std::optional<std::string> missing_out_folder(const std::string& out) {
  const std::filesystem::path path(out);
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (std::filesystem::is_directory(folder)) return std::nullopt;
  return fmt::format("--out {}: the folder {} does not exist", out, folder.string());
}

/// Parses argv into `app` and runs `body()`: --help exits as CLI11 does, a parse error or an
/// InputError (a bad file) returns 2, any other exception (CUDA, NCCL) is printed and returns 1.
template <class Body>
int parse_and_run(CLI::App& app, int argc, char** argv, std::string_view program, Body&& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(program, std::string(e.what()) + " (see --help)");
  }
  try {
    return body();
  } catch (const InputError& e) {
    return usage_error(program, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.size()), program.data(), e.what());
    return 1;
  }
}

}  // namespace moesim::calibrate
