// GPU tests of the element-wise training kernels against their CPU references on seeded random data:
// SwiGLU forward and backward, RMSNorm forward and backward (d_gamma accumulated by FP32 atomics in
// no fixed order, so compared with a tolerance), one AdamW step, dropout forward and backward (mask
// and outputs bit for bit); the vector and the scalar paths, tensors past 2^31 elements (sampled
// rows, parameters and elements), then their bandwidth against the copy kernel's.
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/copy_bandwidth.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/numeric.hpp"
#include "kernels/random_fill.hpp"
#include "kernels/reference/compare.hpp"
#include "kernels/reference/elementwise_ref.hpp"
#include "kernels/stream.hpp"
#include "kernels/tests/gpu_test.hpp"
#include "kernels/timing.hpp"

using namespace moesim::kernels;

namespace {

constexpr double kBf16Tolerance = 5e-3;  // BF16 rounding of the output: about 1e-3 relative L2
constexpr float kEps = 1e-5f;

std::vector<float> to_float(const std::vector<std::uint16_t>& raw) {
  std::vector<float> out(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) out[i] = bf16_to_float(raw[i]);
  return out;
}

std::vector<double> to_double(const std::vector<std::uint16_t>& raw) {
  const auto f = to_float(raw);
  return {f.begin(), f.end()};
}

template <class T>
std::vector<double> to_double(const std::vector<T>& v) {
  return {v.begin(), v.end()};
}

std::string shape(std::int64_t rows, std::int64_t cols, std::size_t offset) {
  return std::to_string(rows) + "x" + std::to_string(cols) + (offset != 0 ? ", unaligned" : "");
}

// Tensors start `offset` elements into their buffers: 1 makes them unaligned (the scalar path).
// `sampled` rows only are compared (all when empty).
void check_swiglu(std::int64_t rows, std::int64_t ffn, std::size_t offset, Stream& stream,
                  const std::vector<std::int64_t>& sampled = {}) {
  const std::string what = "swiglu " + shape(rows, ffn, offset);
  const std::size_t row_in = 2 * static_cast<std::size_t>(ffn), row_out = static_cast<std::size_t>(ffn);
  const std::size_t n_out = static_cast<std::size_t>(rows) * row_out;
  DeviceBuffer<std::uint16_t> in(2 * n_out + offset), out(n_out + offset), dout(n_out + offset);
  DeviceBuffer<std::uint16_t> din(2 * n_out + offset);
  fill_random_bf16(in.data(), in.size(), 0x5e1 + static_cast<std::uint64_t>(ffn), 4.0f, stream);
  fill_random_bf16(dout.data(), dout.size(), 0xd0 + static_cast<std::uint64_t>(rows), 1.0f, stream);
  out.fill_bytes(kPoisonByte);
  din.fill_bytes(kPoisonByte);
  swiglu_forward(in.data() + offset, rows, ffn, out.data() + offset, stream);
  swiglu_backward(in.data() + offset, dout.data() + offset, rows, ffn, din.data() + offset, stream);
  stream.synchronize();
  std::vector<std::int64_t> picked = sampled;
  for (std::int64_t r = 0; sampled.empty() && r < rows; ++r) picked.push_back(r);
  std::vector<double> got, want, got_d, want_d, ref(row_out), ref_d(row_in);
  for (const std::int64_t r : picked) {
    const auto u = static_cast<std::size_t>(r);
    const auto x = to_float(in.download(offset + u * row_in, row_in));
    const auto g = to_float(dout.download(offset + u * row_out, row_out));
    swiglu_forward_reference(x.data(), 1, ffn, ref.data());
    swiglu_backward_reference(x.data(), g.data(), 1, ffn, ref_d.data());
    const auto y = to_double(out.download(offset + u * row_out, row_out));
    const auto dy = to_double(din.download(offset + u * row_in, row_in));
    got.insert(got.end(), y.begin(), y.end());
    want.insert(want.end(), ref.begin(), ref.end());
    got_d.insert(got_d.end(), dy.begin(), dy.end());
    want_d.insert(want_d.end(), ref_d.begin(), ref_d.end());
  }
  require_close(compare(got, want), kBf16Tolerance, what + " forward");
  require_close(compare(got_d, want_d), kBf16Tolerance, what + " backward");
}

// As check_swiglu. d_gamma starts from non-zero values (it is accumulated into) and is compared
// only when every row is.
void check_rmsnorm(std::int64_t rows, std::int64_t hidden, std::size_t offset, Stream& stream,
                   const std::vector<std::int64_t>& sampled = {}) {
  const std::string what = "rmsnorm " + shape(rows, hidden, offset);
  const auto h = static_cast<std::size_t>(hidden);
  const std::size_t n = static_cast<std::size_t>(rows) * h;
  DeviceBuffer<std::uint16_t> x(n + offset), out(n + offset), dout(n + offset), dx(n + offset);
  std::vector<std::uint16_t> gamma_host(h + offset);
  std::vector<float> dgamma_host(h);
  for (std::size_t j = 0; j < gamma_host.size(); ++j) {
    gamma_host[j] = float_to_bf16(1.0f + 0.5f * random_uniform(0x9a, j));  // away from zero, both signs of x * gamma
  }
  for (std::size_t j = 0; j < h; ++j) dgamma_host[j] = 0.25f * random_uniform(0xd9, j);
  DeviceBuffer<std::uint16_t> gamma(gamma_host);
  DeviceBuffer<float> rstd(static_cast<std::size_t>(rows)), dgamma(dgamma_host);
  fill_random_bf16(x.data(), x.size(), 0x25 + h, 3.0f, stream);
  fill_random_bf16(dout.data(), dout.size(), 0x26 + h, 1.0f, stream);
  out.fill_bytes(kPoisonByte);
  dx.fill_bytes(kPoisonByte);
  rstd.fill_bytes(kPoisonByte);
  rmsnorm_forward(x.data() + offset, gamma.data() + offset, rows, hidden, kEps, out.data() + offset, rstd.data(),
                  stream);
  rmsnorm_backward(x.data() + offset, gamma.data() + offset, rstd.data(), dout.data() + offset, rows, hidden,
                   dx.data() + offset, dgamma.data(), stream);
  stream.synchronize();
  const auto gamma_all = to_float(gamma_host);
  const std::vector<float> g(gamma_all.begin() + static_cast<std::ptrdiff_t>(offset), gamma_all.end());
  const bool all_rows = sampled.empty();
  std::vector<std::int64_t> picked = sampled;
  for (std::int64_t r = 0; all_rows && r < rows; ++r) picked.push_back(r);
  std::vector<double> got, want, got_dx, want_dx, got_rstd, want_rstd, ref(h), ref_dx(h);
  std::vector<double> want_dg(dgamma_host.begin(), dgamma_host.end());
  for (const std::int64_t r : picked) {
    const auto u = static_cast<std::size_t>(r);
    const auto xr = to_float(x.download(offset + u * h, h));
    const auto dyr = to_float(dout.download(offset + u * h, h));
    double rs_want = 0;
    rmsnorm_forward_reference(xr.data(), g.data(), 1, hidden, kEps, ref.data(), &rs_want);
    const double rs_got = rstd.download(u, 1)[0];  // the backward runs on the kernel's saved rstd
    rmsnorm_backward_reference(xr.data(), g.data(), &rs_got, dyr.data(), 1, hidden, ref_dx.data(), want_dg.data());
    const auto y = to_double(out.download(offset + u * h, h));
    const auto d = to_double(dx.download(offset + u * h, h));
    got.insert(got.end(), y.begin(), y.end());
    want.insert(want.end(), ref.begin(), ref.end());
    got_dx.insert(got_dx.end(), d.begin(), d.end());
    want_dx.insert(want_dx.end(), ref_dx.begin(), ref_dx.end());
    got_rstd.push_back(rs_got);
    want_rstd.push_back(rs_want);
  }
  require_close(compare(got, want), kBf16Tolerance, what + " forward");
  require_close(compare(got_rstd, want_rstd), 1e-5, what + " rstd");
  require_close(compare(got_dx, want_dx), kBf16Tolerance, what + " backward d_x");
  if (all_rows) require_close(compare(to_double(dgamma.download()), want_dg), 1e-5, what + " backward d_gamma");
}

// One step with a learning rate large enough that the update stands well above FP32 rounding of
// the master weight, so that comparing the updates (new - old) is meaningful. `sampled` windows
// of 64 parameters are compared (all parameters when empty).
void check_adam(std::int64_t n, std::size_t offset, Stream& stream, const std::vector<std::int64_t>& sampled = {}) {
  const std::string what = "adam " + std::to_string(n) + (offset != 0 ? ", unaligned" : "");
  const std::size_t size = static_cast<std::size_t>(n) + offset;
  DeviceBuffer<float> master(size), m(size), v(size), grad(size);
  DeviceBuffer<std::uint16_t> weight(size);
  fill_random_f32(master.data(), size, 0xa1, 1.0f, 0.0f, stream);
  fill_random_f32(m.data(), size, 0xa2, 1e-2f, 0.0f, stream);
  fill_random_f32(v.data(), size, 0xa3, 1e-4f, 1.01e-4f, stream);  // positive: a second moment
  fill_random_f32(grad.data(), size, 0xa4, 1e-2f, 0.0f, stream);
  weight.fill_bytes(kPoisonByte);
  stream.synchronize();
  std::vector<std::pair<std::size_t, std::size_t>> windows;  // (first parameter, count)
  if (sampled.empty()) windows.emplace_back(0, static_cast<std::size_t>(n));
  for (const std::int64_t s : sampled) {
    const std::int64_t first = s + 64 <= n ? s : n - 64;
    windows.emplace_back(static_cast<std::size_t>(first), 64);
  }
  std::vector<std::vector<float>> before[4];
  for (const auto& [first, count] : windows) {
    before[0].push_back(master.download(offset + first, count));
    before[1].push_back(m.download(offset + first, count));
    before[2].push_back(v.download(offset + first, count));
    before[3].push_back(grad.download(offset + first, count));
  }
  AdamParams p;
  p.lr = 1e-2f;
  p.step = 10;
  adam_update(master.data() + offset, m.data() + offset, v.data() + offset, grad.data() + offset,
              weight.data() + offset, n, p, stream);
  stream.synchronize();
  std::vector<double> got_step, want_step, got_m, want_m, got_v, want_v;
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto [first, count] = windows[w];
    std::vector<float> pm = before[0][w], mm = before[1][w], vm = before[2][w];
    std::vector<std::uint16_t> wt(count);
    adam_reference(pm.data(), mm.data(), vm.data(), before[3][w].data(), wt.data(), static_cast<std::int64_t>(count),
                   p);
    const auto gp = master.download(offset + first, count), gm = m.download(offset + first, count);
    const auto gv = v.download(offset + first, count);
    const auto gw = weight.download(offset + first, count);
    for (std::size_t i = 0; i < count; ++i) {
      got_step.push_back(static_cast<double>(gp[i]) - before[0][w][i]);
      want_step.push_back(static_cast<double>(pm[i]) - before[0][w][i]);
      test::require(gw[i] == float_to_bf16(gp[i]),
                    what + ": weight " + std::to_string(first + i) + " is not bf16(master)");
    }
    got_m.insert(got_m.end(), gm.begin(), gm.end());
    want_m.insert(want_m.end(), mm.begin(), mm.end());
    got_v.insert(got_v.end(), gv.begin(), gv.end());
    want_v.insert(want_v.end(), vm.begin(), vm.end());
  }
  require_close(compare(got_step, want_step), 1e-4, what + " master update");
  require_close(compare(got_m, want_m), 1e-6, what + " m");
  require_close(compare(got_v, want_v), 1e-6, what + " v");
}

// Where dropout's tensors start in their buffers: `offset` elements into the BF16 ones (1: unaligned,
// the scalar path), `mask_offset` bytes into the mask's (BF16 aligned but the mask not: scalar too);
// `in_place` writes out over in and d_in over d_out.
struct DropoutLayout {
  std::size_t offset = 0, mask_offset = 0;
  bool in_place = false;
};

// Forward, then backward from the forward's mask; the mask and both outputs compared bit for bit
// with the reference (a mask has no tolerance, and the reference does the kernel's float math).
// `sampled` windows of 64 elements are compared (all elements when empty).
void check_dropout(std::int64_t n, float p, Stream& stream, const DropoutLayout& layout = {},
                   const std::vector<std::int64_t>& sampled = {}) {
  const std::string what = "dropout " + std::to_string(n) + " p " + std::to_string(p) +
                           (layout.offset != 0 ? ", unaligned" : "") +
                           (layout.mask_offset != 0 ? ", mask unaligned" : "") + (layout.in_place ? ", in place" : "");
  const std::size_t size = static_cast<std::size_t>(n) + layout.offset;
  DeviceBuffer<std::uint16_t> in(size), dout(size);
  DeviceBuffer<std::uint16_t> out(layout.in_place ? 0 : size), din(layout.in_place ? 0 : size);
  DeviceBuffer<std::uint8_t> mask(static_cast<std::size_t>(n) + layout.mask_offset);
  fill_random_bf16(in.data(), size, 0xd7 + static_cast<std::uint64_t>(n), 4.0f, stream);
  fill_random_bf16(dout.data(), size, 0xd8 + static_cast<std::uint64_t>(n), 1.0f, stream);
  if (!layout.in_place) {
    out.fill_bytes(kPoisonByte);
    din.fill_bytes(kPoisonByte);
  }
  mask.fill_bytes(kPoisonByte);
  stream.synchronize();
  std::vector<std::pair<std::size_t, std::size_t>> windows;  // (first element, count)
  if (sampled.empty()) windows.emplace_back(0, static_cast<std::size_t>(n));
  for (const std::int64_t s : sampled) {
    const std::int64_t first = s + 64 <= n ? s : n - 64;
    windows.emplace_back(static_cast<std::size_t>(first), 64);
  }
  std::vector<std::vector<std::uint16_t>> in_before, dout_before;  // in place, the outputs overwrite them
  for (const auto& [first, count] : windows) {
    in_before.push_back(in.download(layout.offset + first, count));
    dout_before.push_back(dout.download(layout.offset + first, count));
  }
  const std::uint64_t seed = 0x5eed0000 + static_cast<std::uint64_t>(n);
  std::uint16_t* y = (layout.in_place ? in : out).data() + layout.offset;
  std::uint16_t* dx = (layout.in_place ? dout : din).data() + layout.offset;
  std::uint8_t* m = mask.data() + layout.mask_offset;
  dropout_forward(in.data() + layout.offset, n, p, seed, m, y, stream);
  dropout_backward(dout.data() + layout.offset, m, n, p, dx, stream);
  stream.synchronize();
  const DeviceBuffer<std::uint16_t>& y_buf = layout.in_place ? in : out;
  const DeviceBuffer<std::uint16_t>& dx_buf = layout.in_place ? dout : din;
  std::size_t kept = 0, compared = 0;
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto [first, count] = windows[w];
    std::vector<std::uint8_t> want_mask(count);
    std::vector<std::uint16_t> want_y(count), want_dx(count);
    dropout_forward_reference(in_before[w].data(), static_cast<std::int64_t>(count), p, seed, want_mask.data(),
                              want_y.data(), static_cast<std::int64_t>(first));
    dropout_backward_reference(dout_before[w].data(), want_mask.data(), static_cast<std::int64_t>(count), p,
                               want_dx.data());
    const auto got_mask = mask.download(layout.mask_offset + first, count);
    const auto got_y = y_buf.download(layout.offset + first, count);
    const auto got_dx = dx_buf.download(layout.offset + first, count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::string at = what + ": element " + std::to_string(first + i);
      test::require(got_mask[i] == want_mask[i], at + ": mask " + std::to_string(got_mask[i]) + ", reference " +
                                                     std::to_string(want_mask[i]));
      test::require(got_y[i] == want_y[i], at + ": forward bf16 " + std::to_string(got_y[i]) + ", reference " +
                                               std::to_string(want_y[i]));
      test::require(got_dx[i] == want_dx[i], at + ": backward bf16 " + std::to_string(got_dx[i]) + ", reference " +
                                                 std::to_string(want_dx[i]));
      kept += want_mask[i];
    }
    compared += count;
  }
  // The reference's statistics are its own test's; this only catches a degenerate seed or p here.
  if (compared >= 100000) {
    const double fraction = static_cast<double>(kept) / static_cast<double>(compared);
    test::require(std::fabs(fraction - (1.0 - p)) < 0.01, what + ": kept fraction " + std::to_string(fraction));
  }
}

bool device_memory_at_least(std::size_t bytes) {
  std::size_t free = 0, total = 0;
  MOESIM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (free >= bytes) return true;
  std::printf("      skipped: %.1f GiB free, %.1f GiB needed\n", static_cast<double>(free) / (1 << 30),
              static_cast<double>(bytes) / (1 << 30));
  return false;
}

// Each tensor below has more than 2^31 elements (and the scalar paths index elements, not vectors).
void check_past_2g() {
  Stream stream;
  const auto ends = [](std::int64_t rows) {
    return std::vector<std::int64_t>{0, 1, rows / 2 + 7, rows - 2, rows - 1};
  };
  const std::int64_t swiglu_rows = 70000, ffn = 16384;  // in: 2.29e9 elements
  if (device_memory_at_least(static_cast<std::size_t>(swiglu_rows) * ffn * 12 + (std::size_t{1} << 30))) {
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      check_swiglu(swiglu_rows, ffn, offset, stream, ends(swiglu_rows));
    }
  }
  const std::int64_t norm_rows = 131100, hidden = 16384;  // 2.148e9 elements
  if (device_memory_at_least(static_cast<std::size_t>(norm_rows) * hidden * 8 + (std::size_t{1} << 30))) {
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      check_rmsnorm(norm_rows, hidden, offset, stream, ends(norm_rows));
    }
  }
  const std::int64_t params = (std::int64_t{1} << 31) + 37;
  if (device_memory_at_least(static_cast<std::size_t>(params) * 18 + (std::size_t{1} << 30))) {
    const std::vector<std::int64_t> at = {0, (std::int64_t{1} << 31) - 32, params / 2, params - 64};
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) check_adam(params, offset, stream, at);
  }
  const std::int64_t elements = (std::int64_t{1} << 31) + 37;  // in, out, d_out, d_in (2 bytes), mask (1)
  if (device_memory_at_least(static_cast<std::size_t>(elements) * 9 + (std::size_t{1} << 30))) {
    const std::vector<std::int64_t> at = {0, (std::int64_t{1} << 31) - 32, elements / 2, elements - 64};
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      check_dropout(elements, 0.1f, stream, DropoutLayout{offset, offset, false}, at);
    }
  }
}

void report_bandwidth() {
  Stream stream;
  const double copy_bw = measure_copy_bandwidth(std::size_t{1} << 30, 3, 10).bytes_per_second;
  TimingPlan plan;
  plan.repeats = 10;
  const auto line = [&](const char* name, std::size_t bytes, double us) {
    const double bw = static_cast<double>(bytes) / (us * 1e-6);
    std::printf("      %s: %.1f us, %.0f GB/s = %.0f%% of copy (%.0f GB/s)\n", name, us, bw / 1e9, 100 * bw / copy_bw,
                copy_bw / 1e9);
  };
  {
    const std::int64_t rows = 16384, ffn = 14336;
    DeviceBuffer<std::uint16_t> in(static_cast<std::size_t>(rows) * ffn * 2), out(in.size() / 2), dout(out.size());
    DeviceBuffer<std::uint16_t> din(in.size());
    fill_random_bf16(in.data(), in.size(), 1, 4.0f, stream);
    fill_random_bf16(dout.data(), dout.size(), 2, 1.0f, stream);
    line("swiglu forward 16384x14336", swiglu_forward_bytes(rows, ffn),
         time_launches(stream, [&] { swiglu_forward(in.data(), rows, ffn, out.data(), stream); }, plan).median);
    const auto backward = [&] { swiglu_backward(in.data(), dout.data(), rows, ffn, din.data(), stream); };
    line("swiglu backward 16384x14336", swiglu_backward_bytes(rows, ffn), time_launches(stream, backward, plan).median);
  }
  {
    const std::int64_t rows = 16384, hidden = 7168;
    const std::size_t n = static_cast<std::size_t>(rows) * hidden;
    DeviceBuffer<std::uint16_t> x(n), gamma(static_cast<std::size_t>(hidden)), out(n), dout(n), dx(n);
    DeviceBuffer<float> rstd(static_cast<std::size_t>(rows)), dgamma(static_cast<std::size_t>(hidden));
    fill_random_bf16(x.data(), n, 3, 3.0f, stream);
    fill_random_bf16(gamma.data(), gamma.size(), 4, 1.0f, stream);
    fill_random_bf16(dout.data(), n, 5, 1.0f, stream);
    dgamma.fill_bytes(0);
    const auto forward = [&] {
      rmsnorm_forward(x.data(), gamma.data(), rows, hidden, kEps, out.data(), rstd.data(), stream);
    };
    const auto backward = [&] {  // d_gamma keeps accumulating across the timed calls: only the time matters
      rmsnorm_backward(x.data(), gamma.data(), rstd.data(), dout.data(), rows, hidden, dx.data(), dgamma.data(),
                       stream);
    };
    line("rmsnorm forward 16384x7168", rmsnorm_forward_bytes(rows, hidden),
         time_launches(stream, forward, plan).median);
    line("rmsnorm backward 16384x7168", rmsnorm_backward_bytes(rows, hidden),
         time_launches(stream, backward, plan).median);
  }
  {
    const std::int64_t n = std::int64_t{1} << 28;
    const auto size = static_cast<std::size_t>(n);
    DeviceBuffer<float> master(size), m(size), v(size), grad(size);
    DeviceBuffer<std::uint16_t> weight(size);
    fill_random_f32(master.data(), size, 6, 1.0f, 0.0f, stream);
    fill_random_f32(m.data(), size, 7, 1e-2f, 0.0f, stream);
    fill_random_f32(v.data(), size, 8, 1e-4f, 1.01e-4f, stream);
    fill_random_f32(grad.data(), size, 9, 1e-2f, 0.0f, stream);
    const AdamParams p;
    const auto step = [&] { adam_update(master.data(), m.data(), v.data(), grad.data(), weight.data(), n, p, stream); };
    line("adam 2^28 parameters", adam_bytes(n), time_launches(stream, step, plan).median);
  }
  {
    // The scores of 16 heads at seq 8192: [16 x 8192 x 8192], what unfused attention drops out.
    const std::int64_t n = std::int64_t{16} * 8192 * 8192;
    const auto size = static_cast<std::size_t>(n);
    DeviceBuffer<std::uint16_t> in(size), out(size);
    DeviceBuffer<std::uint8_t> mask(size);
    fill_random_bf16(in.data(), size, 10, 1.0f, stream);
    const auto forward = [&] { dropout_forward(in.data(), n, 0.1f, 11, mask.data(), out.data(), stream); };
    const auto backward = [&] { dropout_backward(in.data(), mask.data(), n, 0.1f, out.data(), stream); };
    line("dropout forward 2^30 elements", dropout_forward_bytes(n), time_launches(stream, forward, plan).median);
    line("dropout backward 2^30 elements", dropout_backward_bytes(n), time_launches(stream, backward, plan).median);
  }
}

}  // namespace

int main() {
  return test::run_gpu_cases({
      {"swiglu: forward and backward, vector and scalar paths",
       [] {
         Stream stream;
         check_swiglu(1000, 1408, 0, stream);
         check_swiglu(333, 2048, 0, stream);
         check_swiglu(77, 1003, 0, stream);  // ffn not a multiple of 8: scalar
         check_swiglu(129, 1408, 1, stream);
         check_swiglu(1, 8, 0, stream);
         swiglu_forward(nullptr, 0, 1408, nullptr, stream);  // nothing to do: no launch
       }},
      {"rmsnorm: forward and backward, every row layout, d_gamma accumulated",
       [] {
         Stream stream;
         for (const std::int64_t hidden : {64, 1024, 2048, 4096, 7168, 16384}) check_rmsnorm(517, hidden, 0, stream);
         check_rmsnorm(300, 1001, 0, stream);   // scalar, small rows
         check_rmsnorm(200, 5003, 0, stream);   // scalar, wide rows
         check_rmsnorm(257, 4096, 1, stream);   // unaligned
         check_rmsnorm(3, 16384, 0, stream);    // fewer rows than blocks could run
       }},
      {"adam: one step, vector path with a tail, scalar path",
       [] {
         Stream stream;
         check_adam(1000003, 0, stream);
         check_adam(4097, 1, stream);
         check_adam(3, 0, stream);
       }},
      {"dropout: forward and backward bit for bit, vector path with a tail, scalar paths, in place",
       [] {
         Stream stream;
         check_dropout(1000003, 0.1f, stream);
         check_dropout(1000003, 0.5f, stream, DropoutLayout{1, 1, false});  // unaligned: scalar
         check_dropout(4099, 0.25f, stream, DropoutLayout{0, 3, false});    // BF16 aligned, mask not: scalar
         check_dropout(65536, 0.0f, stream);                                // keeps everything, unscaled
         check_dropout(100003, 0.1f, stream, DropoutLayout{0, 0, true});
         check_dropout(7, 0.9f, stream);  // the tail alone
         dropout_forward(nullptr, 0, 0.1f, 1, nullptr, nullptr, stream);  // nothing to do: no launch
         for (const float p : {-0.1f, 1.0f, std::nanf("")}) {
           bool threw = false;
           try {
             dropout_forward(nullptr, 8, p, 1, nullptr, nullptr, stream);
           } catch (const std::invalid_argument&) {
             threw = true;
           }
           test::require(threw, "dropout_forward accepted p " + std::to_string(p));
         }
       }},
      {"past 2^31 elements: sampled rows, parameters and elements", check_past_2g},
      {"swiglu, rmsnorm, adam, dropout: bandwidth vs copy", report_bandwidth},
  });
}
