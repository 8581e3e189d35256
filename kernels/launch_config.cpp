#include "kernels/launch_config.hpp"

#include <map>
#include <mutex>
#include <tuple>

#include <cuda_runtime_api.h>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {
namespace {

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

int current_sm_count() {
  int device = 0;
  MOESIM_CUDA_CHECK(cudaGetDevice(&device));
  static std::map<int, int> cache;
  {
    const std::lock_guard<std::mutex> lock(cache_mutex());
    if (const auto it = cache.find(device); it != cache.end()) return it->second;
  }
  int sms = 0;
  MOESIM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::lock_guard<std::mutex> lock(cache_mutex());
  cache[device] = sms;
  return sms;
}

int resident_blocks_per_sm(const void* kernel, int threads, std::size_t dynamic_smem) {
  int device = 0;
  MOESIM_CUDA_CHECK(cudaGetDevice(&device));
  using Key = std::tuple<int, const void*, int, std::size_t>;
  static std::map<Key, int> cache;
  const Key key{device, kernel, threads, dynamic_smem};
  {
    const std::lock_guard<std::mutex> lock(cache_mutex());
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  int per_sm = 0;
  MOESIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_smem));
  if (per_sm < 1) per_sm = 1;
  const std::lock_guard<std::mutex> lock(cache_mutex());
  cache[key] = per_sm;
  return per_sm;
}

unsigned resident_grid(const void* kernel, int threads, std::size_t work_blocks, std::size_t dynamic_smem) {
  const auto resident = static_cast<std::size_t>(current_sm_count()) *
                        static_cast<std::size_t>(resident_blocks_per_sm(kernel, threads, dynamic_smem));
  const std::size_t blocks = work_blocks < resident ? work_blocks : resident;
  return static_cast<unsigned>(blocks > 0 ? blocks : 1);
}

}  // namespace moesim::kernels
