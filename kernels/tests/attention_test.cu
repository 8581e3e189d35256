// GPU tests of the unfused attention core against the CPU reference on seeded random data: the
// softmax kernels alone (every register configuration and the generic one; causal and not), whole
// heads forward and backward at small sequence lengths, sampled rows at a long one, each also with
// a value head dimension other than the query/key one (DeepSeek-V3's 192 / 128); then timings.
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/attention_softmax.hpp"
#include "kernels/blas_context.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/numeric.hpp"
#include "kernels/random_fill.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "kernels/reference/compare.hpp"
#include "kernels/stream.hpp"
#include "kernels/tests/gpu_test.hpp"
#include "kernels/timing.hpp"

using namespace moesim::kernels;

namespace {

std::vector<double> to_double(const std::vector<std::uint16_t>& raw) {
  std::vector<double> out(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) out[i] = bf16_to_float(raw[i]);
  return out;
}

// rows x seq scores (row r is query position r % seq); sampled rows compared with the reference,
// forward from the input row and backward from the probabilities and gradients as stored.
void check_softmax(std::int64_t rows, int seq, bool causal) {
  Stream stream;
  const std::string what = "softmax seq " + std::to_string(seq) + (causal ? " causal" : "");
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(seq);
  DeviceBuffer<std::uint16_t> s(n), g(n);
  fill_random_bf16(s.data(), n, 0x50f + seq, 3.0f, stream);
  fill_random_bf16(g.data(), n, 0x6ad + seq, 1.0f, stream);
  stream.synchronize();
  const int samples = rows < 24 ? static_cast<int>(rows) : 24;
  std::vector<std::int64_t> picked;
  for (int i = 0; i < samples; ++i) {
    picked.push_back(rows <= samples ? i : i == 0 ? rows - 1 : static_cast<std::int64_t>(random_bits(0x5a, static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(rows)));
  }
  std::vector<std::vector<double>> x_rows, g_rows;
  for (const std::int64_t r : picked) {
    x_rows.push_back(to_double(s.download(static_cast<std::size_t>(r) * seq, static_cast<std::size_t>(seq))));
    g_rows.push_back(to_double(g.download(static_cast<std::size_t>(r) * seq, static_cast<std::size_t>(seq))));
  }
  softmax_forward(s.data(), rows, seq, causal, stream);
  stream.synchronize();
  std::vector<double> got, want, ref(static_cast<std::size_t>(seq));
  std::vector<std::vector<double>> p_rows;
  for (std::size_t i = 0; i < picked.size(); ++i) {
    softmax_row_reference(x_rows[i].data(), seq, static_cast<int>(picked[i] % seq), causal, ref.data());
    p_rows.push_back(to_double(s.download(static_cast<std::size_t>(picked[i]) * seq, static_cast<std::size_t>(seq))));
    got.insert(got.end(), p_rows.back().begin(), p_rows.back().end());
    want.insert(want.end(), ref.begin(), ref.end());
  }
  require_close(compare(got, want), 5e-3, what + " forward");

  softmax_backward(s.data(), g.data(), rows, seq, causal, stream);
  stream.synchronize();
  got.clear();
  want.clear();
  for (std::size_t i = 0; i < picked.size(); ++i) {
    softmax_backward_row_reference(p_rows[i].data(), g_rows[i].data(), seq, ref.data());
    const auto ds = to_double(g.download(static_cast<std::size_t>(picked[i]) * seq, static_cast<std::size_t>(seq)));
    got.insert(got.end(), ds.begin(), ds.end());
    want.insert(want.end(), ref.begin(), ref.end());
  }
  require_close(compare(got, want), 1e-2, what + " backward");
}

std::string describe(const AttentionShape& shape) {
  return "attention " + std::to_string(shape.batch_heads) + "x" + std::to_string(shape.seq) + "x" +
         std::to_string(shape.head_dim) + (shape.head_dim_v != 0 ? "/" + std::to_string(shape.head_dim_v) : "") +
         (shape.causal ? " causal" : "");
}

void check_heads(const AttentionShape& shape) {
  Stream stream;
  BlasContext blas(stream);
  Attention attention(blas, shape, true);
  const std::string what = describe(shape);
  for (const int head : {0, shape.batch_heads - 1}) {
    require_close(attention.check_head(head, false), 2e-2, what + " forward, head " + std::to_string(head));
    require_close(attention.check_head(head, true), 4e-2, what + " forward+backward, head " + std::to_string(head));
  }
}

void check_long_rows(const AttentionShape& shape) {
  Stream stream;
  BlasContext blas(stream);
  Attention attention(blas, shape, true);
  const std::string what = describe(shape);
  require_close(attention.check_forward_rows(6), 2e-2, what + " forward, sampled rows");
  require_close(attention.check_backward_rows(6), 4e-2, what + " dQ, sampled rows");
}

// The buffers: Q, K, dQ, dK of head_dim, V, O, dO, dV of head_dim_v, S and dS; head_dim_v 0 is head_dim.
void check_device_bytes() {
  const std::size_t bh = 4, s = 256;
  const AttentionShape mla{4, 256, 192, true, 128};
  test::require(Attention::device_bytes(mla, true) == 2 * (4 * bh * s * 192 + 4 * bh * s * 128 + 2 * bh * s * s),
                "device_bytes of 192/128 with backward");
  test::require(Attention::device_bytes(mla, false) == 2 * (2 * bh * s * 192 + 2 * bh * s * 128 + bh * s * s),
                "device_bytes of 192/128 forward only");
  test::require(Attention::device_bytes(AttentionShape{4, 256, 64, true}, true) ==
                    Attention::device_bytes(AttentionShape{4, 256, 64, true, 64}, true),
                "device_bytes: head_dim_v 0 is head_dim");
  Stream stream;
  BlasContext blas(stream);
  bool threw = false;
  try {
    Attention bad(blas, AttentionShape{4, 256, 64, true, -1}, false);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  test::require(threw, "Attention accepted head_dim_v -1");
}

void report_timing() {
  Stream stream;
  BlasContext blas(stream);
  for (const AttentionShape& shape : {AttentionShape{16, 8192, 128, true}, AttentionShape{16, 8192, 192, true, 128}}) {
    Attention attention(blas, shape, true);
    TimingPlan plan;
    plan.repeats = 5;
    attention.forward();
    const double f = time_launches(stream, [&] { attention.forward(); }, plan).median;
    const double b = time_launches(stream, [&] { attention.backward(); }, plan).median;
    // The two forward GEMMs, dense (not causal-skipped): QK^T over head_dim, PV over head_dim_v.
    const double flops =
        2.0 * shape.batch_heads * static_cast<double>(shape.seq) * shape.seq * (shape.head_dim + shape.value_dim());
    std::printf("      unfused %s: forward %.0f us (%.0f TFLOP/s on the dense GEMMs), backward %.0f us\n",
                describe(shape).c_str(), f, flops / (f * 1e-6) / 1e12, b);
  }
}

}  // namespace

int main() {
  return test::run_gpu_cases({
      {"softmax: every row configuration, causal and not",
       [] {
         for (const int seq : {8, 24, 256, 1000, 2048, 4096, 8192}) {
           check_softmax(2 * seq, seq, true);
           check_softmax(37, seq, false);
         }
         check_softmax(64, 16384, false);
         check_softmax(64, 20000, true);  // longer than the register kernels: generic
         check_softmax(300, 100, true);   // not a multiple of 8: generic
       }},
      {"attention: whole heads, forward and backward",
       [] {
         check_heads(AttentionShape{3, 128, 64, true});
         check_heads(AttentionShape{2, 256, 128, false});
         check_heads(AttentionShape{2, 1024, 64, true});
       }},
      {"attention: whole heads with head_dim_v != head_dim (192 / 128 and a wider V)",
       [] {
         check_heads(AttentionShape{3, 128, 192, true, 128});
         check_heads(AttentionShape{2, 256, 192, false, 128});
         check_heads(AttentionShape{2, 64, 64, true, 96});
       }},
      {"attention: device_bytes and the shape check", check_device_bytes},
      {"attention: sampled rows at seq 4096",
       [] {
         check_long_rows(AttentionShape{4, 4096, 128, true});
         check_long_rows(AttentionShape{4, 4096, 192, true, 128});
       }},
      {"attention: timing", report_timing},
  });
}
