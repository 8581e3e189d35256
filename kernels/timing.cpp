#include "kernels/timing.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <vector>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {

EventPair::EventPair() {
  MOESIM_CUDA_CHECK(cudaEventCreate(&start_));
  MOESIM_CUDA_CHECK(cudaEventCreate(&stop_));
}

EventPair::~EventPair() {
  (void)cudaEventDestroy(start_);
  (void)cudaEventDestroy(stop_);
}

void EventPair::start(cudaStream_t stream) { MOESIM_CUDA_CHECK(cudaEventRecord(start_, stream)); }
void EventPair::stop(cudaStream_t stream) { MOESIM_CUDA_CHECK(cudaEventRecord(stop_, stream)); }

double EventPair::elapsed_us() {
  MOESIM_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  MOESIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) * 1e3;
}

namespace {

// An instantiated graph of `batch` calls, or none when the calls cannot be captured (a library that
// synchronises or copies from pageable memory inside); then the batch is launched call by call.
class BatchGraph {
 public:
  BatchGraph(cudaStream_t stream, const std::function<void()>& launch, int batch) {
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    bool launched = true;
    try {
      for (int i = 0; i < batch; ++i) launch();
    } catch (const std::exception&) {
      launched = false;
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    if (launched && end == cudaSuccess && graph != nullptr &&
        cudaGraphInstantiate(&exec_, graph, 0) == cudaSuccess) {
      (void)cudaGraphDestroy(graph);
      return;
    }
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    exec_ = nullptr;
    (void)cudaGetLastError();  // the failed capture's error is not the caller's
  }
  ~BatchGraph() {
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
  }
  BatchGraph(const BatchGraph&) = delete;
  BatchGraph& operator=(const BatchGraph&) = delete;
  [[nodiscard]] bool ok() const { return exec_ != nullptr; }
  void launch(cudaStream_t stream) const { MOESIM_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

Summary time_launches(cudaStream_t stream, const std::function<void()>& launch, const TimingPlan& plan) {
  for (int i = 0; i < plan.warmup; ++i) launch();
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(stream));

  EventPair events;
  events.start(stream);
  launch();
  events.stop(stream);
  const double single_us = std::max(events.elapsed_us(), 1e-3);
  const int batch = std::clamp(static_cast<int>(std::ceil(plan.min_sample_us / single_us)), 1, std::max(plan.max_batch, 1));

  std::unique_ptr<BatchGraph> graph;
  if (plan.use_graph && batch > 1) {
    graph = std::make_unique<BatchGraph>(stream, launch, batch);
    if (!graph->ok()) graph.reset();
  }
  const auto sample = [&] {
    if (graph) {
      graph->launch(stream);
    } else {
      for (int i = 0; i < batch; ++i) launch();
    }
  };
  sample();  // uploads the graph; not timed
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(stream));

  const int repeats = single_us > plan.large_call_us ? std::min(plan.repeats, plan.large_repeats) : plan.repeats;
  std::vector<double> per_call;
  per_call.reserve(static_cast<std::size_t>(repeats));
  for (int r = 0; r < repeats; ++r) {
    events.start(stream);
    sample();
    events.stop(stream);
    per_call.push_back(events.elapsed_us() / batch);
  }
  return summarize(std::move(per_call));
}

}  // namespace moesim::kernels
