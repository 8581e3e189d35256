#pragma once
// An owned CUDA stream: graphs can be captured on it (never on the legacy stream 0). It is a
// blocking stream on purpose: DeviceBuffer's plain cudaMemcpy / cudaMemset run on the legacy stream,
// and a blocking stream is ordered with those both ways, so an upload or a poison fill is complete
// before the next kernel on this stream starts and a download sees every earlier kernel's writes.
#include <cuda_runtime_api.h>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {

class Stream {
 public:
  Stream() { MOESIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamDefault)); }
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  [[nodiscard]] cudaStream_t get() const { return stream_; }
  operator cudaStream_t() const { return stream_; }  // NOLINT: passes where a cudaStream_t is expected
  void synchronize() const { MOESIM_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_{};
};

}  // namespace moesim::kernels
