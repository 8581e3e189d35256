#pragma once
// Runs a validation workload on this machine's first `gpus` GPUs — one host thread per GPU, NCCL
// communicators for the EP, DP and expert-DP groups — and measures rank 0: warm-up steps, then timed
// steps whose per-phase CUDA-event times are averaged, and the device memory in use at its peak.
#include <functional>
#include <string>

#include "record/validation_result.hpp"
#include "record/validation_workload.hpp"

namespace moesim::proxy {

/// Throws kernels::CudaError on a CUDA/NCCL failure and std::invalid_argument on a workload the
/// runner cannot run; `progress` receives one line per finished step.
[[nodiscard]] MeasuredRun run_workload(const ValidationWorkload& w, const std::function<void(const std::string&)>& progress);

}  // namespace moesim::proxy
