#pragma once
// Owned device memory (cudaMalloc, never managed memory: see the device notes) with typed copies.
// The copies and fills run on the legacy default stream: use them with kernels on a blocking stream
// (kernels::Stream), which orders against it, or synchronise first.
#include <cstddef>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) MOESIM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count_ * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);  // a destructor cannot report; a bad free shows at the next check
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_ != nullptr) (void)cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  [[nodiscard]] T* data() { return ptr_; }
  [[nodiscard]] const T* data() const { return ptr_; }
  [[nodiscard]] std::size_t size() const { return count_; }
  [[nodiscard]] std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    const std::size_t n = host.size() < count_ ? host.size() : count_;
    if (n > 0) MOESIM_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  [[nodiscard]] std::vector<T> download() const { return download(0, count_); }
  /// Elements [first, first + count) only: sampled checks of large outputs copy what they compare.
  [[nodiscard]] std::vector<T> download(std::size_t first, std::size_t count) const {
    std::vector<T> host(count);
    if (count > 0) MOESIM_CUDA_CHECK(cudaMemcpy(host.data(), ptr_ + first, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  /// Fills every byte with `value`: 0xff makes BF16/FP32 outputs NaN, so an element a kernel never
  /// wrote fails its check instead of passing as a stale value.
  void fill_bytes(int value) {
    if (count_ > 0) MOESIM_CUDA_CHECK(cudaMemset(ptr_, value, bytes()));
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

/// The poison byte for outputs (see fill_bytes).
inline constexpr int kPoisonByte = 0xff;

}  // namespace moesim::kernels
