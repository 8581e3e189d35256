#pragma once
// The project's fitted constants (calibrate/fitted/constants.json, schema moesim.fitted/1): what
// `moesim accuracy --fit` computes from the published measurements and writes with its provenance —
// the data file and its hash, the fidelity and objective, and for every constant the search grid, the
// points it was fitted on and the error there. Config reads the file into every scenario
// (hw/host_costs.hpp); report writes it.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/host_kind.hpp"

namespace moesim {

inline constexpr const char* kFittedSchema = "moesim.fitted/1";

/// The constants a fit may hold: per host kind, per GPU architecture.
inline constexpr const char* kFrameworkOpSeconds = "framework_op_s";        ///< hw/host_costs.hpp
inline constexpr const char* kSustainedTensorRate = "sustained_tensor_rate";  ///< hw/gpu_spec.hpp

/// One fitted constant: the host time of one framework op on one host kind, or the share of the
/// datasheet tensor rate one GPU architecture sustains.
struct FittedConstant {
  std::string name;  ///< kFrameworkOpSeconds or kSustainedTensorRate
  hw::HostKind host = hw::HostKind::kX86;  ///< framework_op_s
  std::string architecture;               ///< sustained_tensor_rate: "ampere", "hopper", "blackwell"
  double value = 0;
  double search_from = 0, search_to = 0;  ///< the interval searched
  double resolution = 0;                  ///< the finest grid step of the search
  std::vector<std::string> points;        ///< ids of the published points it was fitted on
  double mape = 0;                        ///< their MAPE with this value (fraction)
  double bias = 0;                        ///< their mean speed error with this value (> 0: optimistic)
  double reference = 0;                   ///< a published measurement of the same quantity, for comparison
  std::string reference_source;
};

struct FitRecord {
  std::string command;     ///< the command that writes the file
  std::string data_file;   ///< the published measurements it was fitted on
  std::string data_fnv1a;  ///< their FNV-1a 64-bit hash, 16 hex digits
  std::int64_t data_points = 0;
  std::string fidelity;    ///< the fidelity the search predicted at
  std::string objective;
  std::vector<FittedConstant> constants;
};

}  // namespace moesim
