#pragma once
// The project's fitted constants (docs/accuracy.md "Fitted constants"): the host's seconds per
// framework op, one per host kind (hw/host_costs.hpp), fitted on the published end-to-end points whose
// runs had that host, and cross-validated by model family — each family predicted with constants
// fitted without it. A deterministic grid search, so the same data gives the same file byte for byte.
#include <string>
#include <vector>

#include "accuracy/accuracy.hpp"
#include "hw/host_costs.hpp"
#include "record/fit.hpp"

namespace moesim::accuracy {

/// What a fit searches and how it judges.
struct FitOptions {
  Fidelity fidelity = Fidelity::kEstimate;  ///< the planner's fidelity: fast, and what ranks layouts
  double from_s = 0.0, to_s = 5e-4;         ///< the interval searched per host kind
  /// Where published reference figures of the same quantity come from (FittedConstant::reference).
  hw::HostCosts reference;
  std::vector<std::string> reference_sources;  ///< per host kind
};

/// The model family of a point: its subgroup's model name up to the first '-' ("llama", "qwen3").
[[nodiscard]] std::string family_of(const PublishedPoint& p);

/// Fits framework_op_s of each host kind on the runnable points whose runtime host is that kind
/// (`points` as config loads them), minimising their MAPE: a grid of 41 values over the interval, then
/// two refinements ten times finer around the best. The published reference (options.reference) stays
/// unless a value does strictly better (ties: the smaller value), so a kind without points, or whose
/// points do not depend on it, keeps it.
[[nodiscard]] std::vector<FittedConstant> fit_host_constants(const std::vector<PublishedPoint>& points,
                                                             const FitOptions& options);

/// The host costs of fitted constants.
[[nodiscard]] hw::HostCosts host_costs_of(const std::vector<FittedConstant>& constants);

/// `points` with every scenario's host costs replaced by `costs`.
[[nodiscard]] std::vector<PublishedPoint> with_host_costs(std::vector<PublishedPoint> points, const hw::HostCosts& costs);

/// One family left out: the constants fitted on every other family's points.
struct CrossValidationFold {
  std::string family;
  hw::HostCosts costs;
  int points = 0;  ///< the family's runnable points
};

struct CrossValidation {
  std::vector<CrossValidationFold> folds;  ///< by family name
  std::vector<PublishedPoint> points;      ///< the points with their fold's costs (the report points here)
  /// Every runnable point, predicted at `fidelity` with its family's fold constants (file order).
  AccuracyReport report;
};

/// Leave-one-family-out: for each family, fits on the others (options) and predicts the family's points
/// at `fidelity`.
[[nodiscard]] CrossValidation cross_validate(const std::vector<PublishedPoint>& points, const FitOptions& options,
                                             Fidelity fidelity);

}  // namespace moesim::accuracy
