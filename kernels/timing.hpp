#pragma once
// CUDA-event timing of repeated launches, as METHOD.md asks: warm-up first, then many samples,
// median and spread. A sample times a batch of back-to-back calls (replayed from a CUDA graph when
// the calls can be captured) so that microsecond kernels are not measured as launch gaps.
#include <functional>

#include <cuda_runtime_api.h>

#include "kernels/reference/stats.hpp"

namespace moesim::kernels {

struct TimingPlan {
  int warmup = 3;                ///< untimed calls (module load, cuBLAS heuristics' first use, caches)
  int repeats = 20;              ///< timed samples
  double min_sample_us = 200.0;  ///< a sample batches calls until it lasts about this long
  int max_batch = 200;           ///< ... but never more calls than this
  bool use_graph = true;         ///< capture the batch into a CUDA graph (falls back when capture fails)
  double large_call_us = 20000;  ///< a call longer than this is "large" ...
  int large_repeats = 10;        ///< ... and gets at most this many samples
};

/// Times `launch` (which enqueues one call on `stream`): the Summary is in microseconds per call.
[[nodiscard]] Summary time_launches(cudaStream_t stream, const std::function<void()>& launch, const TimingPlan& plan);

/// RAII pair of CUDA events with an elapsed-time read in microseconds.
class EventPair {
 public:
  EventPair();
  ~EventPair();
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  void start(cudaStream_t stream);
  void stop(cudaStream_t stream);
  /// Waits for the stop event; microseconds between the two.
  [[nodiscard]] double elapsed_us();

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

}  // namespace moesim::kernels
