#pragma once
// CUDA events between the blocks of a proxy step on one rank's stream: each mark closes a block and
// charges the time since the previous mark to that block's phase (validation_phases()). Events are
// only read at the end of the step, so timing adds no synchronisation inside it.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace moesim::proxy {

class PhaseClock {
 public:
  explicit PhaseClock(cudaStream_t stream) : stream_(stream) {}
  ~PhaseClock();
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

  void start_step();
  /// Closes the block that ran since the previous mark (or the step's start) as `phase`.
  void mark(const char* phase);
  /// Waits for the step's last event; seconds per phase and the step's total (start to last mark).
  [[nodiscard]] std::map<std::string, double> end_step(double& step_seconds);

 private:
  [[nodiscard]] cudaEvent_t event(std::size_t i);
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;
  std::vector<const char*> phases_;  ///< phase of the block ending at events_[i + 1]
  std::size_t used_ = 0;
};

}  // namespace moesim::proxy
