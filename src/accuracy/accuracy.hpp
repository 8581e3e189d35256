#pragma once
// `moesim accuracy`: runs published end-to-end points through one model (no per-point constants)
// and reports predicted vs published, the error per point and the MAPE per source group.
#include <map>
#include <string>
#include <vector>

#include "record/published_point.hpp"
#include "record/result.hpp"

namespace moesim::accuracy {

struct PointOutcome {
  const PublishedPoint* point = nullptr;
  double predicted = 0;       ///< in the point's metric and FLOP convention
  double error = 0;           ///< (predicted − published) / published
  /// Predicted speed / published speed − 1, whatever the metric (a step time's is published / predicted
  /// − 1): > 0 means moesim predicts the run faster than it ran (optimistic).
  double speed_error = 0;
  double step_time_s = 0;
  /// The predicted per-GPU memory: the largest peak over ranks, the GPU's capacity, whether it fits.
  double memory_peak_bytes = 0;
  double memory_capacity_bytes = 0;
  bool memory_fits = true;
  std::string failure;        ///< non-empty when the scenario could not be estimated
};

struct GroupSummary {
  std::string group;
  int points = 0;
  double mape = 0;  ///< mean |error| over the group's points
  double bias = 0;  ///< mean speed_error: > 0 optimistic
  double max_abs_error = 0;
};

struct AccuracyReport {
  std::vector<PointOutcome> outcomes;       ///< runnable points, file order
  std::vector<const PublishedPoint*> skipped;
  std::vector<GroupSummary> groups;         ///< sorted by group name
  std::vector<GroupSummary> subgroups;
  double overall_mape = 0;
  double overall_bias = 0;  ///< mean speed_error over every point that ran
};

/// The metric of `point` computed from a result (e.g. TFLOP/s/GPU under the publication's FLOP count).
[[nodiscard]] double metric_from_result(const PublishedPoint& point, const Result& result);

/// Predicts one runnable point at `fidelity` (a scenario the model refuses: `failure`).
[[nodiscard]] PointOutcome predict_point(const PublishedPoint& point, Fidelity fidelity);

/// The report of these outcomes: summaries per group and subgroup, overall MAPE and bias.
[[nodiscard]] AccuracyReport report_of(std::vector<PointOutcome> outcomes, std::vector<const PublishedPoint*> skipped);

/// Predicts every runnable point at `fidelity`. `only_group` restricts to one group when non-empty.
[[nodiscard]] AccuracyReport run_accuracy(const std::vector<PublishedPoint>& points, const std::string& only_group = "",
                                          Fidelity fidelity = Fidelity::kSimulation);

}  // namespace moesim::accuracy
