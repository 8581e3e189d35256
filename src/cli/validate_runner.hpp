#pragma once
// `moesim validate` on a CUDA machine: the workload handed to the proxy runner (`moesim-validate-run`
// beside moesim) in a private temporary folder, and what it measured read back strictly.
#include <filesystem>

#include "record/validation_result.hpp"
#include "record/validation_workload.hpp"

namespace moesim::cli {

/// Runs `runner --workload W --out M --log L` on `w` (W, M, L in a private folder under the system's
/// temporary directory) and reads M into `run`. Returns 0, or the runner's failing exit status (1 when
/// it could not start or was killed); then its workload and log stay in the folder, which stderr names.
/// The folder is removed otherwise. Throws InputError (the measured file kept) when M is malformed.
[[nodiscard]] int run_validation_runner(const std::filesystem::path& runner, const ValidationWorkload& w,
                                        MeasuredRun& run);

}  // namespace moesim::cli
