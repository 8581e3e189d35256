#pragma once
// The CUDA programs the measuring commands hand their work to (`moesim-calibrate`,
// `moesim-validate-run`): built beside `moesim` only with the CUDA toolkit, so that moesim itself never
// links CUDA, found beside the running binary and run as a child process.
#include <filesystem>
#include <string>
#include <vector>

namespace moesim::cli {

/// `name` in the folder of the running moesim (build/moesim-calibrate beside build/moesim).
[[nodiscard]] std::filesystem::path sibling_binary(const std::string& name);

/// Runs `binary` with `args` (its output goes to ours) and waits for it: its exit status, or 1 when it
/// cannot start or ends by a signal (said on stderr after `who`, e.g. "moesim calibrate").
[[nodiscard]] int run_binary(const std::filesystem::path& binary, const std::vector<std::string>& args,
                             const std::string& who);

}  // namespace moesim::cli
