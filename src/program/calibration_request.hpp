#pragma once
// The calibration request of a scenario (moesim.calibration-request/1): every kernel shape one
// training step queries, for `moesim calibrate` and for `moesim validate --calibration-request` (the
// validation proxy's own shapes, so the prediction it is compared with uses kernels measured there).
#include <cstdint>

#include "hw/profile.hpp"
#include "scenario/scenario.hpp"

namespace moesim::program {

/// Every kernel shape one training step of `s` queries (each layer kind, embedding, LM head, MTP);
/// `left_out` counts the shapes beyond what the calibrator measures (hw::calibration_limits; they keep
/// the roofline). The shapes are those LayerCostModel queries, logged as it prices one step.
[[nodiscard]] hw::CalibrationRequest calibration_request_of(const Scenario& s, std::int64_t& left_out);

}  // namespace moesim::program
