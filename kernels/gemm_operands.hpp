#pragma once
// The operands of a GEMM check and timing: seeded random X and W of a precision (see
// reference/gemm_ref.hpp), their scales, and a BF16 output; plus the sampled check of an output
// against the CPU reference.
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/device_buffer.hpp"
#include "kernels/gemm_lt.hpp"
#include "kernels/reference/compare.hpp"

namespace moesim::kernels {

class GemmOperands {
 public:
  /// X [x_rows x k], W [w_rows x k] filled with the precision's seeded values, Y [x_rows x n].
  GemmOperands(GemmPrecision precision, std::int64_t x_rows, std::int64_t w_rows, std::int64_t n, std::int64_t k,
               cudaStream_t stream);

  /// Pointers for the whole matrices.
  [[nodiscard]] GemmPointers whole() const;
  /// Pointers for rows [x_row, ...) of X and Y and [w_row, ...) of W: one expert of a grouped GEMM
  /// (per-tensor formats only; block-scale tensors are tiled and cannot be offset by rows).
  [[nodiscard]] GemmPointers rows(std::int64_t x_row, std::int64_t w_row) const;
  /// Y element (row, col), read back from the device.
  [[nodiscard]] double y_at(std::int64_t row, std::int64_t col) const;
  void poison_y() { y_.fill_bytes(kPoisonByte); }

  [[nodiscard]] GemmPrecision precision() const { return precision_; }
  [[nodiscard]] std::int64_t n() const { return n_; }
  [[nodiscard]] std::int64_t k() const { return k_; }

 private:
  [[nodiscard]] std::size_t element_offset_bytes(std::int64_t elements) const;
  GemmPrecision precision_;
  std::int64_t n_, k_;
  DeviceBuffer<std::uint8_t> x_, w_, x_scale_, w_scale_;
  DeviceBuffer<std::uint16_t> y_;
};

/// Poisons Y, runs `algorithm`, and compares `samples` seeded output elements (row in
/// [row_begin, row_end) of X/Y paired with W row w_row_base + col) with gemm_reference_entry.
[[nodiscard]] Comparison check_gemm_samples(LtMatmul& gemm, GemmOperands& operands, int algorithm, int samples, void* workspace,
                                            cudaStream_t stream);

}  // namespace moesim::kernels
