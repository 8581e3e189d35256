#pragma once
// The fitted constants file (record/fit.hpp; calibrate/fitted/constants.json, built into the binary):
// read strictly, and the host costs every scenario config reads gets from it.
#include <string>

#include "hw/host_costs.hpp"
#include "record/fit.hpp"

namespace moesim::config {

inline constexpr const char* kBuiltinFittedConstantsFile = "calibrate/fitted/constants.json";

/// Parses a moesim.fitted/1 document (text of `file`); InputError naming the path on any deviation.
[[nodiscard]] FitRecord parse_fit_record(const std::string& text, const std::string& file);

/// The built-in file's record, parsed once.
[[nodiscard]] const FitRecord& builtin_fit_record();

/// The host costs of a record: every host kind must have its framework_op_s.
[[nodiscard]] hw::HostCosts host_costs_of(const FitRecord& record, const std::string& file);

/// The built-in sustained_tensor_rate of a GPU architecture (1 where the file fits none).
[[nodiscard]] double fitted_tensor_rate(const std::string& architecture);

/// The built-in host costs, computed once.
[[nodiscard]] const hw::HostCosts& fitted_host_costs();

}  // namespace moesim::config
