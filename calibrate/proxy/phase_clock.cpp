#include "calibrate/proxy/phase_clock.hpp"

#include "kernels/cuda_check.hpp"

namespace moesim::proxy {

PhaseClock::~PhaseClock() {
  for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
}

cudaEvent_t PhaseClock::event(std::size_t i) {
  while (events_.size() <= i) {
    cudaEvent_t e{};
    MOESIM_CUDA_CHECK(cudaEventCreate(&e));
    events_.push_back(e);
  }
  return events_[i];
}

void PhaseClock::start_step() {
  used_ = 0;
  phases_.clear();
  MOESIM_CUDA_CHECK(cudaEventRecord(event(used_++), stream_));
}

void PhaseClock::mark(const char* phase) {
  MOESIM_CUDA_CHECK(cudaEventRecord(event(used_++), stream_));
  phases_.push_back(phase);
}

std::map<std::string, double> PhaseClock::end_step(double& step_seconds) {
  std::map<std::string, double> seconds;
  step_seconds = 0;
  if (used_ < 2) return seconds;
  MOESIM_CUDA_CHECK(cudaEventSynchronize(events_[used_ - 1]));
  for (std::size_t i = 1; i < used_; ++i) {
    float ms = 0;
    MOESIM_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i - 1], events_[i]));
    seconds[phases_[i - 1]] += 1e-3 * ms;
  }
  float total_ms = 0;
  MOESIM_CUDA_CHECK(cudaEventElapsedTime(&total_ms, events_[0], events_[used_ - 1]));
  step_seconds = 1e-3 * total_ms;
  return seconds;
}

}  // namespace moesim::proxy
