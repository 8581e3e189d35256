#pragma once
// What `moesim skew` computes: the step time as routing skew grows, with Megatron's contiguous
// expert placement and with the EPLB-style placement (schema moesim.skew/1, written by report/).
#include <cstdint>
#include <string>
#include <vector>

namespace moesim {

struct SkewPoint {
  double value = 0;               ///< the skew parameter (0 = balanced routing)
  double mean_imbalance = 1.0;    ///< max/mean tokens per EP rank, mean over draws, contiguous placement
  double max_imbalance = 1.0;     ///< the worst draw
  double step_time_s = 0;
  double penalty = 0;             ///< step_time_s / balanced − 1
  double eplb_mean_imbalance = 1.0;
  double eplb_step_time_s = 0;
  double eplb_penalty = 0;
  double recovered = 0;           ///< share of the penalty the placement wins back
};

struct SkewSweep {
  std::string scenario;
  std::string parameter;          ///< sigma (lognormal), s (zipf) or alpha (dirichlet)
  std::int64_t redundant_experts_per_rank = 0;
  double balanced_step_time_s = 0;
  std::vector<SkewPoint> points;
};

}  // namespace moesim
