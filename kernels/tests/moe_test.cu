// GPU tests of the MoE token kernels against their CPU references on seeded random data: the router
// (softmax and sigmoid scoring, top-k; both load layouts), permute (bit-exact) and unpermute (FP32
// accumulation of the weighted copies), then their bandwidth as a fraction of the copy kernel's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "kernels/copy_bandwidth.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/numeric.hpp"
#include "kernels/permute.hpp"
#include "kernels/random_fill.hpp"
#include "kernels/reference/compare.hpp"
#include "kernels/reference/permute_ref.hpp"
#include "kernels/router.hpp"
#include "kernels/stream.hpp"
#include "kernels/tests/gpu_test.hpp"
#include "kernels/timing.hpp"

using namespace moesim::kernels;

namespace {

std::string shape_name(int tokens, int experts, int k) {
  return std::to_string(tokens) + " tokens, " + std::to_string(experts) + " experts, top-" + std::to_string(k);
}

// `ties`: logits rounded to the integers -2..2, so that many experts tie at the top-k boundary and
// the kernel's path for more than 32 candidates runs.
void check_router(int tokens, int experts, int k, RouterScoring scoring, Stream& stream, bool ties = false) {
  DeviceBuffer<float> logits(static_cast<std::size_t>(tokens) * experts);
  DeviceBuffer<std::int32_t> idx(static_cast<std::size_t>(tokens) * k);
  DeviceBuffer<float> prob(static_cast<std::size_t>(tokens) * k);
  if (ties) {
    std::vector<float> host(logits.size());
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = std::round(random_uniform(0x7135, i) * 2.4f);
    logits.upload(host);
  } else {
    fill_random_f32(logits.data(), logits.size(), 0x4047 + experts, 4.0f, 0.0f, stream);
  }
  idx.fill_bytes(kPoisonByte);
  prob.fill_bytes(kPoisonByte);
  router_topk(logits.data(), RouterShape{tokens, experts, k}, scoring, idx.data(), prob.data(), stream);
  stream.synchronize();
  const auto host_logits = logits.download();
  const auto got_idx = idx.download();
  const auto got_prob = prob.download();
  std::vector<std::int32_t> want_idx(static_cast<std::size_t>(k));
  std::vector<float> want_prob(static_cast<std::size_t>(k));
  std::vector<double> got_p, want_p;
  const std::string what = std::string(scoring == RouterScoring::kSoftmax ? "softmax" : "sigmoid") + " router, " + shape_name(tokens, experts, k) +
                           (ties ? ", tied logits" : "");
  for (int t = 0; t < tokens; ++t) {
    router_reference_row(host_logits.data() + static_cast<std::size_t>(t) * experts, experts, k, scoring, want_idx.data(), want_prob.data());
    for (int r = 0; r < k; ++r) {
      const std::size_t i = static_cast<std::size_t>(t) * k + r;
      test::require(got_idx[i] == want_idx[static_cast<std::size_t>(r)],
                    what + ": token " + std::to_string(t) + " choice " + std::to_string(r) + " is expert " + std::to_string(got_idx[i]) +
                        ", reference " + std::to_string(want_idx[static_cast<std::size_t>(r)]));
      got_p.push_back(got_prob[i]);
      want_p.push_back(want_prob[static_cast<std::size_t>(r)]);
    }
  }
  require_close(compare(got_p, want_p), 1e-5, what + " probabilities");
}

// Each token picks k distinct experts uniformly: a seeded partial Fisher-Yates shuffle.
std::vector<std::int32_t> random_routing(int tokens, int experts, int k, std::uint64_t seed) {
  std::vector<std::int32_t> choice(static_cast<std::size_t>(tokens) * k), pool(static_cast<std::size_t>(experts));
  for (int t = 0; t < tokens; ++t) {
    std::iota(pool.begin(), pool.end(), 0);
    for (int r = 0; r < k; ++r) {
      const auto j = r + static_cast<int>(random_bits(seed, static_cast<std::uint64_t>(t) * 64 + r) % static_cast<std::uint64_t>(experts - r));
      std::swap(pool[static_cast<std::size_t>(r)], pool[static_cast<std::size_t>(j)]);
      choice[static_cast<std::size_t>(t) * k + r] = pool[static_cast<std::size_t>(r)];
    }
  }
  return choice;
}

void check_permute(int tokens, int hidden, int experts, int k, bool drop_some, Stream& stream) {
  const std::string what = shape_name(tokens, experts, k) + ", hidden " + std::to_string(hidden);
  const RoutingMap map = build_routing_map(random_routing(tokens, experts, k, 0x9e + k), tokens, k, experts);
  const std::size_t rows = map.permuted_token.size();
  DeviceBuffer<std::uint16_t> x(static_cast<std::size_t>(tokens) * hidden), permuted(rows * hidden), y(static_cast<std::size_t>(tokens) * hidden);
  DeviceBuffer<std::int32_t> src(map.permuted_token);
  std::vector<std::int32_t> prow_host = map.permuted_row;
  if (drop_some) {
    for (std::size_t i = 0; i < prow_host.size(); i += 7) prow_host[i] = -1;  // capacity-dropped copies
  }
  DeviceBuffer<std::int32_t> prow(prow_host);
  DeviceBuffer<float> probs(prow_host.size());
  fill_random_bf16(x.data(), x.size(), 0x70c, 3.0f, stream);
  fill_random_f32(probs.data(), probs.size(), 0x9b, 0.5f, 0.5f, stream);
  permuted.fill_bytes(kPoisonByte);
  y.fill_bytes(kPoisonByte);
  permute_tokens(x.data(), src.data(), static_cast<int>(rows), hidden, permuted.data(), stream);
  unpermute_tokens(permuted.data(), prow.data(), probs.data(), tokens, k, hidden, y.data(), stream);
  stream.synchronize();

  const auto hx = x.download();
  std::vector<std::uint16_t> want_perm(rows * hidden);
  permute_reference(hx.data(), hidden, map, want_perm.data());
  test::require(permuted.download() == want_perm, "permute, " + what + ": rows differ from the reference");

  RoutingMap dropped = map;
  dropped.permuted_row = prow_host;
  const auto hp = probs.download();
  const auto hy = y.download();
  std::vector<double> got, want, row(static_cast<std::size_t>(hidden));
  for (int t = 0; t < tokens; ++t) {
    unpermute_reference_row(want_perm.data(), hidden, dropped, hp.data(), t, row.data());
    for (int c = 0; c < hidden; ++c) {
      got.push_back(bf16_to_float(hy[static_cast<std::size_t>(t) * hidden + c]));
      want.push_back(row[static_cast<std::size_t>(c)]);
    }
  }
  require_close(compare(got, want), 4e-3, "unpermute, " + what);
}

void report_bandwidth() {
  Stream stream;
  const double copy_bw = measure_copy_bandwidth(std::size_t{1} << 30, 3, 10).bytes_per_second;
  TimingPlan plan;
  plan.repeats = 10;
  {
    const RouterShape s{16384, 256, 8};
    DeviceBuffer<float> logits(static_cast<std::size_t>(s.tokens) * s.experts);
    DeviceBuffer<std::int32_t> idx(static_cast<std::size_t>(s.tokens) * s.topk);
    DeviceBuffer<float> prob(idx.size());
    fill_random_f32(logits.data(), logits.size(), 1, 4.0f, 0.0f, stream);
    for (const RouterScoring scoring : {RouterScoring::kSoftmax, RouterScoring::kSigmoid}) {
      const double us = time_launches(stream, [&] { router_topk(logits.data(), s, scoring, idx.data(), prob.data(), stream); }, plan).median;
      const double bw = static_cast<double>(router_bytes(s)) / (us * 1e-6);
      std::printf("      router %s 16384x256 top-8: %.1f us, %.0f GB/s = %.0f%% of copy (%.0f GB/s)\n",
                  scoring == RouterScoring::kSoftmax ? "softmax" : "sigmoid", us, bw / 1e9, 100 * bw / copy_bw, copy_bw / 1e9);
    }
  }
  const int tokens = 16384, hidden = 7168, k = 8;
  const RoutingMap map = build_routing_map(random_routing(tokens, 256, k, 5), tokens, k, 256);
  DeviceBuffer<std::uint16_t> x(static_cast<std::size_t>(tokens) * hidden), permuted(map.permuted_token.size() * hidden), y(x.size());
  DeviceBuffer<std::int32_t> src(map.permuted_token), prow(map.permuted_row);
  DeviceBuffer<float> probs(map.permuted_row.size());
  fill_random_bf16(x.data(), x.size(), 3, 1.0f, stream);
  fill_random_f32(probs.data(), probs.size(), 4, 0.5f, 0.5f, stream);
  const double p_us = time_launches(stream, [&] { permute_tokens(x.data(), src.data(), static_cast<int>(src.size()), hidden, permuted.data(), stream); }, plan).median;
  const double u_us = time_launches(stream, [&] { unpermute_tokens(permuted.data(), prow.data(), probs.data(), tokens, k, hidden, y.data(), stream); }, plan).median;
  const double p_bw = static_cast<double>(permute_bytes(tokens, k, hidden)) / (p_us * 1e-6);
  const double u_bw = static_cast<double>(unpermute_bytes(tokens, k, hidden)) / (u_us * 1e-6);
  std::printf("      permute 16384x7168 top-8: %.1f us, %.0f GB/s = %.0f%% of copy\n", p_us, p_bw / 1e9, 100 * p_bw / copy_bw);
  std::printf("      unpermute 16384x7168 top-8: %.1f us, %.0f GB/s = %.0f%% of copy\n", u_us, u_bw / 1e9, 100 * u_bw / copy_bw);
}

}  // namespace

int main() {
  return test::run_gpu_cases({
      {"router: softmax and sigmoid, float4 and scalar layouts, k 1..16",
       [] {
         Stream stream;
         // 8..512 experts: float4 rows (multiples of 4) and scalar rows (33, 60+1), every values-per-lane kernel.
         const int shapes[][2] = {{8, 1}, {8, 2}, {16, 8}, {33, 4}, {61, 2}, {64, 8}, {100, 6}, {128, 2}, {160, 8}, {256, 8}, {256, 16}, {512, 16}, {512, 1}};
         for (const auto& s : shapes) {
           for (const RouterScoring scoring : {RouterScoring::kSoftmax, RouterScoring::kSigmoid}) check_router(1001, s[0], s[1], scoring, stream);
         }
       }},
      {"router: tied logits (more than 32 candidates at the threshold)",
       [] {
         Stream stream;
         for (const auto& s : {std::pair{256, 8}, std::pair{512, 16}, std::pair{61, 4}, std::pair{64, 16}}) {
           for (const RouterScoring scoring : {RouterScoring::kSoftmax, RouterScoring::kSigmoid}) check_router(777, s.first, s.second, scoring, stream, true);
         }
       }},
      {"permute/unpermute: hidden 8..7168, top-1..8, dropped copies",
       [] {
         Stream stream;
         check_permute(257, 8, 4, 1, false, stream);
         check_permute(1000, 4096, 64, 2, false, stream);
         check_permute(333, 7168, 256, 8, false, stream);
         check_permute(129, 2056, 16, 6, true, stream);
       }},
      {"router, permute, unpermute: bandwidth vs copy", report_bandwidth},
  });
}
