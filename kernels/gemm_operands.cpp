#include "kernels/gemm_operands.hpp"

#include <stdexcept>
#include <vector>

#include "kernels/numeric.hpp"
#include "kernels/random_fill.hpp"

namespace moesim::kernels {
namespace {

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

// Bytes of a block-scale tensor for `rows` x `k` data: cuBLASLt tiles the scales in 128-row x
// 4-scale blocks, so both sides are padded. All scales are 1 here, so the tile order does not
// matter and the data's decoded values are the products' true inputs.
std::size_t block_scale_bytes(std::int64_t rows, std::int64_t k, std::int64_t block) {
  return static_cast<std::size_t>(round_up(rows, 128) * round_up((k + block - 1) / block, 4));
}

void fill_operand(GemmPrecision p, bool weight, std::uint8_t* data, std::size_t elements, cudaStream_t stream) {
  const std::uint64_t seed = weight ? kGemmWeightSeed : kGemmInputSeed;
  switch (p) {
    case GemmPrecision::kBf16: fill_random_bf16(reinterpret_cast<std::uint16_t*>(data), elements, seed, 1.0f, stream); return;
    case GemmPrecision::kFp8: fill_random_e4m3(data, elements, seed, weight ? kFp8WeightAmplitude : kFp8InputAmplitude, stream); return;
    case GemmPrecision::kMxfp8: fill_random_e4m3(data, elements, seed, kMxfp8Amplitude, stream); return;
    case GemmPrecision::kNvfp4: fill_random_e2m1(data, elements, seed, stream); return;
  }
}

void fill_scale(GemmPrecision p, bool weight, DeviceBuffer<std::uint8_t>& scale) {
  if (p == GemmPrecision::kFp8) {
    const float s = gemm_operand_scale(p, weight);
    MOESIM_CUDA_CHECK(cudaMemcpy(scale.data(), &s, sizeof s, cudaMemcpyHostToDevice));
  } else if (p == GemmPrecision::kMxfp8) {
    scale.fill_bytes(127);  // UE8M0 2^(127-127) = 1
  } else if (p == GemmPrecision::kNvfp4) {
    scale.fill_bytes(0x38);  // E4M3 1.0
  }
}

std::size_t element_offset_bytes_for(GemmPrecision p, std::int64_t elements) {
  const auto e = static_cast<std::size_t>(elements);
  switch (p) {
    case GemmPrecision::kBf16: return 2 * e;
    case GemmPrecision::kFp8:
    case GemmPrecision::kMxfp8: return e;
    case GemmPrecision::kNvfp4: return e / 2;  // two E2M1 codes per byte
  }
  return e;
}

std::size_t scale_bytes(GemmPrecision p, std::int64_t rows, std::int64_t k) {
  switch (p) {
    case GemmPrecision::kBf16: return 0;
    case GemmPrecision::kFp8: return sizeof(float);
    case GemmPrecision::kMxfp8: return block_scale_bytes(rows, k, 32);
    case GemmPrecision::kNvfp4: return block_scale_bytes(rows, k, 16);
  }
  return 0;
}

}  // namespace

GemmOperands::GemmOperands(GemmPrecision precision, std::int64_t x_rows, std::int64_t w_rows, std::int64_t n, std::int64_t k,
                           cudaStream_t stream)
    : precision_(precision),
      n_(n),
      k_(k),
      x_(element_offset_bytes_for(precision, x_rows * k)),
      w_(element_offset_bytes_for(precision, w_rows * k)),
      x_scale_(scale_bytes(precision, x_rows, k)),
      w_scale_(scale_bytes(precision, w_rows, k)),
      y_(static_cast<std::size_t>(x_rows * n)) {
  if (precision == GemmPrecision::kNvfp4 && k % 2 != 0) throw std::invalid_argument("GemmOperands: NVFP4 needs an even k");
  fill_operand(precision, false, x_.data(), static_cast<std::size_t>(x_rows * k), stream);
  fill_operand(precision, true, w_.data(), static_cast<std::size_t>(w_rows * k), stream);
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  fill_scale(precision, false, x_scale_);
  fill_scale(precision, true, w_scale_);
}

std::size_t GemmOperands::element_offset_bytes(std::int64_t elements) const { return element_offset_bytes_for(precision_, elements); }

GemmPointers GemmOperands::whole() const {
  return GemmPointers{x_.data(), w_.data(), const_cast<std::uint16_t*>(y_.data()), x_scale_.data(), w_scale_.data()};
}

GemmPointers GemmOperands::rows(std::int64_t x_row, std::int64_t w_row) const {
  if (precision_ == GemmPrecision::kMxfp8 || precision_ == GemmPrecision::kNvfp4) {
    throw std::logic_error("GemmOperands::rows: block-scaled operands cannot be split by rows");
  }
  GemmPointers p = whole();
  p.x = x_.data() + element_offset_bytes(x_row * k_);
  p.w = w_.data() + element_offset_bytes(w_row * k_);
  p.y = const_cast<std::uint16_t*>(y_.data()) + x_row * n_;
  return p;
}

double GemmOperands::y_at(std::int64_t row, std::int64_t col) const {
  return bf16_to_float(y_.download(static_cast<std::size_t>(row * n_ + col), 1)[0]);
}

Comparison check_gemm_samples(LtMatmul& gemm, GemmOperands& operands, int algorithm, int samples, void* workspace,
                              cudaStream_t stream) {
  operands.poison_y();
  gemm.run(operands.whole(), algorithm, workspace, stream);
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  const GemmShape& s = gemm.shape();
  std::vector<double> got, want;
  for (int i = 0; i < samples; ++i) {
    // Corners first (edge tiles are where indexing goes wrong), then seeded positions.
    std::int64_t row, col;
    if (i < 4) {
      row = (i & 1) ? s.m - 1 : 0;
      col = (i & 2) ? s.n - 1 : 0;
    } else {
      row = static_cast<std::int64_t>(random_bits(0xc4ec, 2 * static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(s.m));
      col = static_cast<std::int64_t>(random_bits(0xc4ec, 2 * static_cast<std::uint64_t>(i) + 1) % static_cast<std::uint64_t>(s.n));
    }
    got.push_back(operands.y_at(row, col));
    want.push_back(gemm_reference_entry(gemm.precision(), s.k, row, col));
  }
  return compare(got, want);
}

}  // namespace moesim::kernels
