#pragma once
// Does moesim rank layouts the way reality does? For a published run (model, cluster, GPU count,
// batch, precision), the rank of its published layout among every candidate the planner would
// consider, timed with the same estimator the planner ranks with (docs/planner.md).
#include <cstdint>
#include <string>

#include "scenario/scenario.hpp"

namespace moesim::planner {

struct LayoutRank {
  std::int64_t considered = 0;   ///< candidates enumerated
  std::int64_t feasible = 0;     ///< candidates that fit (the published layout counted once)
  std::int64_t rank = 0;         ///< 1 + feasible candidates strictly faster than the published layout
  double percentile = 0;         ///< rank / feasible
  double published_step_time_s = 0;
  double best_step_time_s = 0;
  std::string best_layout;
  bool published_fits = true;    ///< the memory model's verdict on the published layout
  std::string published_detail;  ///< why it does not fit, when it does not
};

/// `published` is the scenario of the published run (layout, micro-batch, recompute, precision as
/// published). The space is the planner's default for the model and cluster, at the published
/// precision, with the published values of each knob added to its list.
[[nodiscard]] LayoutRank rank_published_layout(const Scenario& published, int threads = 0);

}  // namespace moesim::planner
