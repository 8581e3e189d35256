#pragma once
// Grid sizes for the memory-bound kernels: a grid-stride loop over exactly as many blocks as can be
// resident at once (SMs x blocks per SM at the kernel's occupancy). More blocks only add launch
// waves; fewer leave HBM bandwidth unused.
#include <cstddef>

namespace moesim::kernels {

/// Multiprocessors of the current device (cached: launchers ask on every launch).
[[nodiscard]] int current_sm_count();

/// Resident blocks per SM of `kernel` (a __global__ function's address) at `threads` threads and
/// `dynamic_smem` bytes, at least 1; cached per (device, kernel, threads, smem).
[[nodiscard]] int resident_blocks_per_sm(const void* kernel, int threads, std::size_t dynamic_smem);

/// min(work_blocks, SMs x resident blocks per SM), at least 1.
[[nodiscard]] unsigned resident_grid(const void* kernel, int threads, std::size_t work_blocks, std::size_t dynamic_smem = 0);

template <class Kernel>
[[nodiscard]] unsigned resident_grid(Kernel* kernel, int threads, std::size_t work_blocks, std::size_t dynamic_smem = 0) {
  return resident_grid(reinterpret_cast<const void*>(kernel), threads, work_blocks, dynamic_smem);
}

}  // namespace moesim::kernels
