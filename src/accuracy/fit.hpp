#pragma once
// The project's fitted constants (docs/accuracy.md, Round 8): the host's seconds per framework op, one
// per host kind (hw/host_costs.hpp), and the share of the datasheet tensor rate a training step
// sustains, one per GPU architecture fitted (hw/gpu_spec.hpp), fitted on the published end-to-end
// points and cross-validated by model family — each family predicted with constants fitted without
// it. A deterministic coordinate search, so the same data gives the same file byte for byte.
#include <string>
#include <vector>

#include "accuracy/accuracy.hpp"
#include "record/fit.hpp"

namespace moesim::accuracy {

/// What a fit searches and how it judges.
struct FitOptions {
  Fidelity fidelity = Fidelity::kEstimate;  ///< the planner's fidelity: fast, and what ranks layouts
  double host_from_s = 0.0, host_to_s = 5e-4;  ///< the interval of framework_op_s
  double rate_from = 0.5, rate_to = 1.2;      ///< the interval of sustained_tensor_rate
  /// The constants, in the order the search visits them, each with its published reference value and
  /// source (the search starts there and keeps it unless a value does strictly better).
  std::vector<FittedConstant> constants;
  int rounds = 2;  ///< passes over the constants (each moves one constant with the others fixed)
};

/// The options of the project's fit: framework_op_s for x86 and Grace, sustained_tensor_rate for
/// Blackwell, with these references (value and source, e.g. from the built-in file).
[[nodiscard]] FitOptions project_fit_options(const std::vector<FittedConstant>& references);

/// The model family of a point: its subgroup's model name up to the first '-' ("llama", "qwen3").
[[nodiscard]] std::string family_of(const PublishedPoint& p);

/// Whether constant `c` changes the prediction of `p` (its host kind, its GPU's architecture).
[[nodiscard]] bool depends_on(const PublishedPoint& p, const FittedConstant& c);

/// `points` with these constants' values in their scenarios.
void apply_constants(std::vector<PublishedPoint>& points, const std::vector<FittedConstant>& constants);

/// Fits options.constants on the runnable points, a coordinate search: `rounds` passes, each constant
/// in turn minimising the MAPE of the points that depend on it (a grid of 21 values over its interval,
/// then two refinements ten times finer around the best), the others held. Returns the constants with
/// their values, the points each depends on, and their MAPE and bias there.
[[nodiscard]] std::vector<FittedConstant> fit_constants(const std::vector<PublishedPoint>& points,
                                                        const FitOptions& options);

/// One family left out: the constants fitted on every other family's points.
struct CrossValidationFold {
  std::string family;
  std::vector<FittedConstant> constants;
  int points = 0;  ///< the family's runnable points
};

struct CrossValidation {
  std::vector<CrossValidationFold> folds;  ///< by family name
  std::vector<PublishedPoint> points;      ///< the points with their fold's constants (the report points here)
  /// Every runnable point, predicted at `fidelity` with its family's fold constants (file order).
  AccuracyReport report;
};

/// Leave-one-family-out: for each family, fits on the others (options) and predicts the family's points
/// at `fidelity`.
[[nodiscard]] CrossValidation cross_validate(const std::vector<PublishedPoint>& points, const FitOptions& options,
                                             Fidelity fidelity);

}  // namespace moesim::accuracy
