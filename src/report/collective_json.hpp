#pragma once
// JSON of `moesim collective --json`: an array of rows in nccl-tests' conventions.
#include <cstdint>
#include <string>
#include <vector>

namespace moesim::report {

struct CollectiveRow {
  std::string op;
  std::int64_t gpus = 0;
  double bytes = 0;
  double time_s = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::string algorithm;  ///< "ring", "nvls", ... (+ "/LL128" etc. for the protocol at fidelity estimate)
  std::string fidelity;
};

/// `[{op, gpus, bytes, time_s, algbw_GBps, busbw_GBps, algorithm, fidelity}, ...]`, 2-space indent.
[[nodiscard]] std::string collective_rows_to_json_text(const std::vector<CollectiveRow>& rows);

}  // namespace moesim::report
