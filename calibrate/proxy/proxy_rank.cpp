#include "calibrate/proxy/proxy_rank.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda_check.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/nccl_check.hpp"
#include "kernels/permute.hpp"
#include "kernels/random_fill.hpp"
#include "kernels/router.hpp"
#include "scenario/recompute_module.hpp"

namespace moesim::proxy {
namespace {

using kernels::DeviceBuffer;
using kernels::GemmLayout;
using Buffer16 = DeviceBuffer<std::uint16_t>;

constexpr float kNormEps = 1e-5f;
/// Megatron's default --attention-dropout: the unfused path drops out the softmax output (the cost
/// model's unfused attention moves those bytes too).
constexpr float kAttentionDropout = 0.1f;

std::size_t count(std::int64_t a, std::int64_t b = 1, std::int64_t c = 1) {
  return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(c);
}

/// Where each weight starts in a layer's parameter range (dense ones first, then the experts').
struct Offsets {
  std::int64_t gamma1, qkv, q_down, q_norm, q_up, kv_down, kv_norm, kv_up, proj, gamma2, router, shared_fc1,
      shared_fc2, dense_fc1, dense_fc2, experts;
  explicit Offsets(const LayerParams& p) {
    gamma1 = 0;
    qkv = gamma1 + p.gamma1;
    q_down = qkv + p.qkv;
    q_norm = q_down + p.q_down;
    q_up = q_norm + p.q_norm;
    kv_down = q_up + p.q_up;
    kv_norm = kv_down + p.kv_down;
    kv_up = kv_norm + p.kv_norm;
    proj = kv_up + p.kv_up;
    gamma2 = proj + p.proj;
    router = gamma2 + p.gamma2;
    shared_fc1 = router + p.router;
    shared_fc2 = shared_fc1 + p.shared_fc1;
    dense_fc1 = shared_fc2 + p.shared_fc2;
    dense_fc2 = dense_fc1 + p.dense_fc1;
    experts = dense_fc2 + p.dense_fc2;
  }
  [[nodiscard]] std::int64_t expert_fc1(const LayerParams& p, std::int64_t j) const {
    return experts + j * (p.expert_fc1 + p.expert_fc2);
  }
  [[nodiscard]] std::int64_t expert_fc2(const LayerParams& p, std::int64_t j) const {
    return expert_fc1(p, j) + p.expert_fc1;
  }
};

std::vector<std::int64_t> expert_offsets(const std::vector<std::int64_t>& tokens) {
  std::vector<std::int64_t> offsets(tokens.size() + 1, 0);
  for (std::size_t j = 0; j < tokens.size(); ++j) offsets[j + 1] = offsets[j] + tokens[j];
  return offsets;
}

Buffer16 random_bf16(std::size_t n, std::uint64_t seed, float amplitude, cudaStream_t stream) {
  Buffer16 b(n);
  if (n > 0) kernels::fill_random_bf16(b.data(), n, seed, amplitude, stream);
  return b;
}

}  // namespace

struct ProxyRank::Scores {
  Buffer16 probs, dropped;           ///< the softmax output and its dropout output, [batch·heads × seq × seq]
  DeviceBuffer<std::uint8_t> mask;   ///< the dropout mask, one byte per score
  explicit Scores(std::size_t n) : probs(n), dropped(n), mask(n) {}
};

struct ProxyRank::Saved {
  DeviceBuffer<float> rstd1, rstd2, probs, q_rstd, kv_rstd;
  DeviceBuffer<std::int32_t> indices;
  Buffer16 ln1, qkv, ctx, x_mid, ln2;
  Buffer16 q_latent, q_latent_norm, kv_latent, kv_latent_norm;  ///< multi-latent attention's latents
  std::unique_ptr<Scores> scores;                               ///< unfused attention without core recompute
  Buffer16 recv, fc1_out, act, combined, shared_fc1_out, shared_act;
};

struct ProxyRank::Device {
  DeviceBuffer<std::int32_t> permute, unpermute, regroup, ungroup;
};

ProxyRank::~ProxyRank() = default;

ProxyRank::ProxyRank(const ValidationWorkload& w, std::int64_t rank, RankComms comms)
    : w_(w), comms_(comms), params_(layer_params(w)), blas_(stream_.get()) {
  if (w.tp != 1) throw std::invalid_argument("the proxy runner runs TP 1 only");
  for (const std::string& module : w.recompute_modules) {
    if (module != to_string(RecomputeModule::kCoreAttn)) {
      throw std::invalid_argument("the proxy runner replays full recompute or the core_attn module only, not " + module);
    }
  }
  full_recompute_ = w.recompute == "full";
  unfused_ = w.attention == "unfused";
  save_scores_ = unfused_ && w.recompute == "none";
  const AttentionWidths widths = attention_widths(w);
  const std::int64_t t = w.tokens_per_rank, h = w.hidden, layers = w.layers;
  const std::int64_t qkv = widths.qkv();
  const std::size_t score_count = count(w.micro_batch_size * w.heads, w.seq, w.seq);
  const std::int64_t gate = w.gated ? 2 : 1;
  rows_ = w.moe ? t * w.topk : 0;
  const auto seed = w.seed ^ (static_cast<std::uint64_t>(rank) << 32);
  cudaStream_t st = stream_.get();

  std::int64_t received_max = 0;
  std::vector<std::int64_t> layer_received(static_cast<std::size_t>(layers), 0);
  if (w.moe) {
    routing_.resize(static_cast<std::size_t>(layers));
    maps_.resize(static_cast<std::size_t>(layers));
    for (std::int64_t l = 0; l < layers; ++l) {
      for (std::int64_t mb = 0; mb < w.microbatches; ++mb) {
        RoutingPlan plan = routing_plan(w, rank, l, mb);
        auto dev = std::make_unique<Device>();
        dev->permute = DeviceBuffer<std::int32_t>(plan.permute_map);
        dev->unpermute = DeviceBuffer<std::int32_t>(plan.unpermute_map);
        dev->regroup = DeviceBuffer<std::int32_t>(plan.regroup_map);
        dev->ungroup = DeviceBuffer<std::int32_t>(plan.ungroup_map);
        auto& r = layer_received[static_cast<std::size_t>(l)];
        r = std::max(r, plan.received);
        routing_[static_cast<std::size_t>(l)].push_back(std::move(plan));
        maps_[static_cast<std::size_t>(l)].push_back(std::move(dev));
      }
      received_max = std::max(received_max, layer_received[static_cast<std::size_t>(l)]);
    }
  }

  // Model state: BF16 weights, FP32 main grads (Megatron's gradient-accumulation fusion adds into
  // them), FP32 master weights and Adam moments (no distributed optimizer in the proxy).
  const std::size_t per_layer = count(params_.total());
  for (std::int64_t l = 0; l < layers; ++l) {
    weights_.push_back(random_bf16(per_layer, seed + 1000 + static_cast<std::uint64_t>(l), 0.02f, st));
    grads_.emplace_back(per_layer);
    master_.emplace_back(per_layer);
    adam_m_.emplace_back(per_layer);
    adam_v_.emplace_back(per_layer);
    kernels::fill_random_f32(master_.back().data(), per_layer, seed + 2000 + static_cast<std::uint64_t>(l), 0.02f, 0.0f, st);
    adam_m_.back().fill_bytes(0);
    adam_v_.back().fill_bytes(0);
  }

  // Activations.
  for (std::int64_t l = 0; l <= layers; ++l) inputs_.push_back(random_bf16(count(t, h), seed + 3000 + static_cast<std::uint64_t>(l), 1.0f, st));
  const std::int64_t sets = full_recompute_ ? 1 : layers;
  for (std::int64_t i = 0; i < sets; ++i) {
    auto s = std::make_unique<Saved>();
    const std::int64_t received = full_recompute_ ? received_max : layer_received[static_cast<std::size_t>(i)];
    s->rstd1 = DeviceBuffer<float>(count(t));
    s->rstd2 = DeviceBuffer<float>(count(t));
    s->ln1 = Buffer16(count(t, h));
    s->qkv = Buffer16(count(t, qkv));
    s->ctx = Buffer16(count(t, widths.out));
    if (widths.mla) {
      s->q_latent = Buffer16(count(t, w.q_lora_rank));
      s->q_latent_norm = Buffer16(count(t, w.q_lora_rank));
      s->q_rstd = DeviceBuffer<float>(count(t));
      s->kv_latent = Buffer16(count(t, widths.kv_down));
      s->kv_latent_norm = Buffer16(count(t, w.kv_lora_rank));
      s->kv_rstd = DeviceBuffer<float>(count(t));
    }
    if (save_scores_) s->scores = std::make_unique<Scores>(score_count);
    s->x_mid = Buffer16(count(t, h));
    s->ln2 = Buffer16(count(t, h));
    if (w.moe) {
      s->probs = DeviceBuffer<float>(count(t, w.topk));
      s->indices = DeviceBuffer<std::int32_t>(count(t, w.topk));
      s->recv = Buffer16(count(received, h));
      s->fc1_out = Buffer16(count(received, gate * w.expert_ffn));
      s->act = Buffer16(count(received, w.expert_ffn));
      s->combined = Buffer16(count(rows_, h));
      s->shared_fc1_out = Buffer16(count(t, gate * w.shared_ffn));
      s->shared_act = Buffer16(count(t, w.shared_ffn));
    } else {
      s->fc1_out = Buffer16(count(t, gate * w.ffn));
      s->act = Buffer16(count(t, w.ffn));
    }
    saved_.push_back(std::move(s));
  }
  kernels::AttentionShape core{static_cast<int>(w.micro_batch_size * w.heads), static_cast<int>(w.seq),
                               static_cast<int>(w.head_dim), true};
  if (widths.mla) core.head_dim_v = static_cast<int>(w.v_head_dim);
  core_ = std::make_unique<kernels::Attention>(blas_, core, true);
  if (unfused_) {
    // The gradient of the dropout output, and the scores of the layer being recomputed when none is saved.
    score_grad_ = random_bf16(score_count, seed + 8000, 1.0f, st);
    if (!save_scores_) working_scores_ = std::make_unique<Scores>(score_count);
  }
  if (w.moe) {
    logits_f32_ = DeviceBuffer<float>(count(t, w.experts));
    kernels::fill_random_f32(logits_f32_.data(), logits_f32_.size(), seed + 4000, 4.0f, 0.0f, st);
  }
  const std::int64_t rows_max = std::max({t, rows_, received_max});
  for (auto& b : scratch_rows_) b = random_bf16(count(rows_max, h), seed + 5000, 1.0f, st);
  const std::int64_t wide = std::max({t * qkv, t * widths.out, received_max * gate * w.expert_ffn, t * gate * w.shared_ffn,
                                      t * gate * w.ffn, t * w.experts});
  for (auto& b : scratch_wide_) b = random_bf16(count(wide), seed + 6000, 1.0f, st);
  for (auto& b : grad_io_) b = random_bf16(count(t, h), seed + 7000, 1.0f, st);
  grad_mid_ = Buffer16(count(t, h));
  grad_norm_ = Buffer16(count(t, h));
  stream_.synchronize();
}

ProxyRank::Saved& ProxyRank::saved(std::int64_t layer) { return *saved_[static_cast<std::size_t>(full_recompute_ ? 0 : layer)]; }

const std::uint16_t* ProxyRank::weight(std::int64_t layer, std::int64_t offset) const {
  return weights_[static_cast<std::size_t>(layer)].data() + offset;
}

float* ProxyRank::grad(std::int64_t layer, std::int64_t offset) { return grads_[static_cast<std::size_t>(layer)].data() + offset; }

void ProxyRank::gemm(GemmLayout layout, std::int64_t m, std::int64_t n, std::int64_t k, const void* x, const void* w,
                     void* y, bool accumulate) {
  if (m <= 0 || n <= 0 || k <= 0) return;  // an expert without tokens: nothing to compute
  // The alignment the plan promises cuBLASLt must hold for these pointers (an expert's rows start
  // at row offsets): the largest power of two up to 256 dividing all three addresses.
  const auto bits = reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(w) |
                    reinterpret_cast<std::uintptr_t>(y) | std::uintptr_t{256};
  const auto alignment = static_cast<unsigned>(bits & (~bits + 1));
  const auto key = std::make_tuple(static_cast<int>(layout), m, n, k, accumulate, alignment);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    auto plan = std::make_unique<kernels::LtMatmul>(blas_.lt(), kernels::GemmPrecision::kBf16, kernels::GemmShape{m, n, k},
                                                    blas_.workspace_bytes(), 1, alignment, layout, accumulate);
    if (!plan->supported()) {
      throw std::runtime_error("cuBLASLt has no algorithm for the proxy GEMM " + std::to_string(m) + "x" + std::to_string(n) +
                               "x" + std::to_string(k) + ": " + plan->unsupported_reason());
    }
    it = plans_.emplace(key, std::move(plan)).first;
  }
  kernels::GemmPointers p;
  p.x = x;
  p.w = w;
  p.y = y;
  it->second->run(p, 0, blas_.lt_workspace(), stream_.get());
}

// Gated MLPs run SwiGLU over [rows x 2ffn]; a plain one (GELU) moves about as many bytes through
// the same kernel over its [rows x ffn] input taken as ffn/2 gate pairs.
void ProxyRank::activation_forward(const std::uint16_t* in, std::int64_t rows, std::int64_t ffn, std::uint16_t* out) {
  if (rows <= 0) return;
  kernels::swiglu_forward(in, rows, w_.gated ? ffn : std::max<std::int64_t>(ffn / 2, 1), out, stream_.get());
}

void ProxyRank::activation_backward(const std::uint16_t* in, const std::uint16_t* d_out, std::int64_t rows, std::int64_t ffn,
                                    std::uint16_t* d_in) {
  if (rows <= 0) return;
  kernels::swiglu_backward(in, d_out, rows, w_.gated ? ffn : std::max<std::int64_t>(ffn / 2, 1), d_in, stream_.get());
}

void ProxyRank::all_to_all(const std::uint16_t* send, const std::vector<std::int64_t>& send_rows, std::uint16_t* recv,
                           const std::vector<std::int64_t>& recv_rows) {
  const auto h = static_cast<std::size_t>(w_.hidden);
  MOESIM_NCCL_CHECK(ncclGroupStart());
  std::size_t send_at = 0, recv_at = 0;
  for (std::size_t peer = 0; peer < send_rows.size(); ++peer) {
    const auto out = static_cast<std::size_t>(send_rows[peer]) * h, in = static_cast<std::size_t>(recv_rows[peer]) * h;
    if (out > 0) MOESIM_NCCL_CHECK(ncclSend(send + send_at, out, ncclBfloat16, static_cast<int>(peer), comms_.ep, stream_.get()));
    if (in > 0) MOESIM_NCCL_CHECK(ncclRecv(recv + recv_at, in, ncclBfloat16, static_cast<int>(peer), comms_.ep, stream_.get()));
    send_at += out;
    recv_at += in;
  }
  MOESIM_NCCL_CHECK(ncclGroupEnd());
}

void ProxyRank::core_forward(Saved& s) {
  core_->forward();  // the core's own Q, K, V, O: the layer's shapes
  if (!unfused_) return;
  Scores& sc = s.scores ? *s.scores : *working_scores_;
  kernels::dropout_forward(sc.probs.data(), static_cast<std::int64_t>(sc.probs.size()), kAttentionDropout, w_.seed,
                           sc.mask.data(), sc.dropped.data(), stream_.get());
}

void ProxyRank::core_backward(Saved& s) {
  if (!save_scores_) core_forward(s);  // flash attention, or a recomputed core, rebuilds the scores first
  if (unfused_) {
    Scores& sc = s.scores ? *s.scores : *working_scores_;
    kernels::dropout_backward(score_grad_.data(), sc.mask.data(), static_cast<std::int64_t>(score_grad_.size()),
                              kAttentionDropout, score_grad_.data(), stream_.get());
  }
  core_->backward();
}

void ProxyRank::dispatch(const RoutingPlan& plan, const Device& maps, const std::uint16_t* from, std::uint16_t* scratch,
                         std::uint16_t* to, PhaseClock* clock) {
  const bool regroup = !plan.regroup_map.empty();
  if (clock) clock->mark("mlp");
  all_to_all(from, plan.send_rows, regroup ? scratch : to, plan.recv_rows);
  if (clock) clock->mark("ep_comm");
  if (regroup) {
    kernels::permute_tokens(scratch, maps.regroup.data(), static_cast<int>(plan.received), static_cast<int>(w_.hidden), to,
                            stream_.get());
  }
}

void ProxyRank::combine(const RoutingPlan& plan, const Device& maps, const std::uint16_t* from, std::uint16_t* scratch,
                        std::uint16_t* to, PhaseClock* clock) {
  const std::uint16_t* back = from;
  if (!plan.regroup_map.empty()) {
    kernels::permute_tokens(from, maps.ungroup.data(), static_cast<int>(plan.received), static_cast<int>(w_.hidden), scratch,
                            stream_.get());
    back = scratch;
  }
  if (clock) clock->mark("mlp");
  all_to_all(back, plan.recv_rows, to, plan.send_rows);
  if (clock) clock->mark("ep_comm");
}

void ProxyRank::attention_forward(std::int64_t layer, Saved& s, PhaseClock* clock) {
  const Offsets o(params_);
  const AttentionWidths a = attention_widths(w_);
  const std::int64_t t = w_.tokens_per_rank, h = w_.hidden;
  cudaStream_t st = stream_.get();
  kernels::rmsnorm_forward(inputs_[static_cast<std::size_t>(layer)].data(), weight(layer, o.gamma1), t, h, kNormEps, s.ln1.data(),
                           s.rstd1.data(), st);
  if (!a.mla) {
    gemm(GemmLayout::kForward, t, a.qkv(), h, s.ln1.data(), weight(layer, o.qkv), s.qkv.data());
  } else {
    // q through its latent (or directly), k and v from the kv latent; the rotary key rides in the latent.
    if (w_.q_lora_rank > 0) {
      gemm(GemmLayout::kForward, t, w_.q_lora_rank, h, s.ln1.data(), weight(layer, o.q_down), s.q_latent.data());
      kernels::rmsnorm_forward(s.q_latent.data(), weight(layer, o.q_norm), t, w_.q_lora_rank, kNormEps,
                               s.q_latent_norm.data(), s.q_rstd.data(), st);
      gemm(GemmLayout::kForward, t, a.q, w_.q_lora_rank, s.q_latent_norm.data(), weight(layer, o.q_up), s.qkv.data());
    } else {
      gemm(GemmLayout::kForward, t, a.q, h, s.ln1.data(), weight(layer, o.qkv), s.qkv.data());
    }
    gemm(GemmLayout::kForward, t, a.kv_down, h, s.ln1.data(), weight(layer, o.kv_down), s.kv_latent.data());
    kernels::rmsnorm_forward(s.kv_latent.data(), weight(layer, o.kv_norm), t, w_.kv_lora_rank, kNormEps,
                             s.kv_latent_norm.data(), s.kv_rstd.data(), st);
    gemm(GemmLayout::kForward, t, a.kv_up, w_.kv_lora_rank, s.kv_latent_norm.data(), weight(layer, o.kv_up),
         s.qkv.data() + count(t, a.q));
  }
  core_forward(s);
  gemm(GemmLayout::kForward, t, h, a.out, s.ctx.data(), weight(layer, o.proj), s.x_mid.data());
  if (clock) clock->mark("attention");
}

void ProxyRank::experts_forward(std::int64_t layer, std::int64_t mb, Saved& s, std::uint16_t* out) {
  const Offsets o(params_);
  const RoutingPlan& plan = routing_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(mb)];
  const std::int64_t h = w_.hidden, f = w_.expert_ffn, gf = (w_.gated ? 2 : 1) * f;
  const std::vector<std::int64_t> at = expert_offsets(plan.expert_tokens);
  for (std::size_t j = 0; j < plan.expert_tokens.size(); ++j) {
    gemm(GemmLayout::kForward, plan.expert_tokens[j], gf, h, s.recv.data() + count(at[j], h),
         weight(layer, o.expert_fc1(params_, static_cast<std::int64_t>(j))), s.fc1_out.data() + count(at[j], gf));
  }
  activation_forward(s.fc1_out.data(), plan.received, f, s.act.data());
  for (std::size_t j = 0; j < plan.expert_tokens.size(); ++j) {
    gemm(GemmLayout::kForward, plan.expert_tokens[j], h, f, s.act.data() + count(at[j], f),
         weight(layer, o.expert_fc2(params_, static_cast<std::int64_t>(j))), out + count(at[j], h));
  }
}

void ProxyRank::mlp_forward(std::int64_t layer, std::int64_t mb, Saved& s, std::uint16_t* out, PhaseClock* clock) {
  const Offsets o(params_);
  const std::int64_t t = w_.tokens_per_rank, h = w_.hidden;
  cudaStream_t st = stream_.get();
  kernels::rmsnorm_forward(s.x_mid.data(), weight(layer, o.gamma2), t, h, kNormEps, s.ln2.data(), s.rstd2.data(), st);
  if (!w_.moe) {
    gemm(GemmLayout::kForward, t, (w_.gated ? 2 : 1) * w_.ffn, h, s.ln2.data(), weight(layer, o.dense_fc1), s.fc1_out.data());
    activation_forward(s.fc1_out.data(), t, w_.ffn, s.act.data());
    gemm(GemmLayout::kForward, t, h, w_.ffn, s.act.data(), weight(layer, o.dense_fc2), out);
    if (clock) clock->mark("mlp");
    return;
  }
  const RoutingPlan& plan = routing_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(mb)];
  const Device& maps = *maps_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(mb)];
  const bool exchange = comms_.ep != nullptr;
  auto& a = scratch_rows_[0];
  auto& b = scratch_rows_[1];
  auto& c = scratch_rows_[2];
  // Router: logits GEMM, then top-k (over fixed random logits: the copies follow the drawn loads).
  gemm(GemmLayout::kForward, t, w_.experts, h, s.ln2.data(), weight(layer, o.router), scratch_wide_[0].data());
  kernels::router_topk(logits_f32_.data(),
                       kernels::RouterShape{static_cast<int>(t), static_cast<int>(w_.experts), static_cast<int>(w_.topk)},
                       w_.router_scoring == "sigmoid" ? kernels::RouterScoring::kSigmoid : kernels::RouterScoring::kSoftmax,
                       s.indices.data(), s.probs.data(), st);
  // Without a peer the permuted rows are already the experts' input; with peers they are sent.
  kernels::permute_tokens(s.ln2.data(), maps.permute.data(), static_cast<int>(rows_), static_cast<int>(h),
                          exchange ? a.data() : s.recv.data(), st);
  if (exchange) dispatch(plan, maps, a.data(), b.data(), s.recv.data(), clock);
  experts_forward(layer, mb, s, exchange ? c.data() : s.combined.data());
  if (exchange) combine(plan, maps, c.data(), b.data(), s.combined.data(), clock);
  kernels::unpermute_tokens(s.combined.data(), maps.unpermute.data(), s.probs.data(), static_cast<int>(t),
                            static_cast<int>(w_.topk), static_cast<int>(h), out, st);
  if (w_.shared_ffn > 0) {
    // The shared expert's output is added to the routed one in Megatron; the add is left out.
    gemm(GemmLayout::kForward, t, (w_.gated ? 2 : 1) * w_.shared_ffn, h, s.ln2.data(), weight(layer, o.shared_fc1),
         s.shared_fc1_out.data());
    activation_forward(s.shared_fc1_out.data(), t, w_.shared_ffn, s.shared_act.data());
    gemm(GemmLayout::kForward, t, h, w_.shared_ffn, s.shared_act.data(), weight(layer, o.shared_fc2), scratch_rows_[3].data());
  }
  if (clock) clock->mark("mlp");
}

void ProxyRank::forward_layer(std::int64_t layer, std::int64_t mb, PhaseClock* clock) {
  Saved& s = saved(layer);
  attention_forward(layer, s, clock);
  mlp_forward(layer, mb, s, inputs_[static_cast<std::size_t>(layer + 1)].data(), clock);
}

void ProxyRank::experts_backward(std::int64_t layer, std::int64_t mb, Saved& s, const std::uint16_t* d_out,
                                 std::uint16_t* d_in) {
  const Offsets o(params_);
  const RoutingPlan& plan = routing_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(mb)];
  const std::int64_t h = w_.hidden, f = w_.expert_ffn, gf = (w_.gated ? 2 : 1) * f;
  const std::vector<std::int64_t> at = expert_offsets(plan.expert_tokens);
  std::uint16_t* d_act = scratch_wide_[1].data();
  std::uint16_t* d_fc1 = scratch_wide_[0].data();
  for (std::size_t j = 0; j < plan.expert_tokens.size(); ++j) {
    const std::int64_t tokens = plan.expert_tokens[j], fc2 = o.expert_fc2(params_, static_cast<std::int64_t>(j));
    gemm(GemmLayout::kDgrad, tokens, f, h, d_out + count(at[j], h), weight(layer, fc2), d_act + count(at[j], f));
    gemm(GemmLayout::kWgrad, h, f, tokens, d_out + count(at[j], h), s.act.data() + count(at[j], f), grad(layer, fc2), true);
  }
  activation_backward(s.fc1_out.data(), d_act, plan.received, f, d_fc1);
  for (std::size_t j = 0; j < plan.expert_tokens.size(); ++j) {
    const std::int64_t tokens = plan.expert_tokens[j], fc1 = o.expert_fc1(params_, static_cast<std::int64_t>(j));
    gemm(GemmLayout::kDgrad, tokens, h, gf, d_fc1 + count(at[j], gf), weight(layer, fc1), d_in + count(at[j], h));
    gemm(GemmLayout::kWgrad, gf, h, tokens, d_fc1 + count(at[j], gf), s.recv.data() + count(at[j], h), grad(layer, fc1), true);
  }
}

void ProxyRank::mlp_backward(std::int64_t layer, std::int64_t mb, Saved& s, const std::uint16_t* d_out, std::uint16_t* d_in,
                             PhaseClock* clock) {
  const Offsets o(params_);
  const std::int64_t t = w_.tokens_per_rank, h = w_.hidden;
  cudaStream_t st = stream_.get();
  std::uint16_t* d_norm = grad_norm_.data();  // the gradient into the pre-MLP norm
  if (!w_.moe) {
    const std::int64_t gffn = (w_.gated ? 2 : 1) * w_.ffn;
    gemm(GemmLayout::kDgrad, t, w_.ffn, h, d_out, weight(layer, o.dense_fc2), scratch_wide_[1].data());
    gemm(GemmLayout::kWgrad, h, w_.ffn, t, d_out, s.act.data(), grad(layer, o.dense_fc2), true);
    activation_backward(s.fc1_out.data(), scratch_wide_[1].data(), t, w_.ffn, scratch_wide_[0].data());
    gemm(GemmLayout::kDgrad, t, h, gffn, scratch_wide_[0].data(), weight(layer, o.dense_fc1), d_norm);
    gemm(GemmLayout::kWgrad, gffn, h, t, scratch_wide_[0].data(), s.ln2.data(), grad(layer, o.dense_fc1), true);
  } else {
    const RoutingPlan& plan = routing_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(mb)];
    const Device& maps = *maps_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(mb)];
    const bool exchange = comms_.ep != nullptr;
    auto& a = scratch_rows_[0];
    auto& b = scratch_rows_[1];
    auto& c = scratch_rows_[2];
    auto& d = scratch_rows_[3];
    if (w_.shared_ffn > 0) {
      const std::int64_t fs = w_.shared_ffn, gfs = (w_.gated ? 2 : 1) * fs;
      gemm(GemmLayout::kDgrad, t, fs, h, d_out, weight(layer, o.shared_fc2), scratch_wide_[1].data());
      gemm(GemmLayout::kWgrad, h, fs, t, d_out, s.shared_act.data(), grad(layer, o.shared_fc2), true);
      activation_backward(s.shared_fc1_out.data(), scratch_wide_[1].data(), t, fs, scratch_wide_[0].data());
      gemm(GemmLayout::kDgrad, t, h, gfs, scratch_wide_[0].data(), weight(layer, o.shared_fc1), d_norm);
      gemm(GemmLayout::kWgrad, gfs, h, t, scratch_wide_[0].data(), s.ln2.data(), grad(layer, o.shared_fc1), true);
    }
    // Unpermute's backward: every token's gradient to each of its copies.
    kernels::permute_tokens(d_out, maps.permute.data(), static_cast<int>(rows_), static_cast<int>(h), a.data(), st);
    // The combine's backward travels as a dispatch, the dispatch's as a combine.
    std::uint16_t* d_expert_out = a.data();
    if (exchange) {
      dispatch(plan, maps, a.data(), b.data(), c.data(), clock);
      d_expert_out = c.data();
    }
    std::uint16_t* d_expert_in = exchange ? d.data() : b.data();
    experts_backward(layer, mb, s, d_expert_out, d_expert_in);
    std::uint16_t* d_permuted = d_expert_in;
    if (exchange) {
      combine(plan, maps, d.data(), c.data(), a.data(), clock);
      d_permuted = a.data();
    }
    kernels::unpermute_tokens(d_permuted, maps.unpermute.data(), s.probs.data(), static_cast<int>(t), static_cast<int>(w_.topk),
                              static_cast<int>(h), d_norm, st);
    // Router: the logits' gradient through the router GEMM.
    gemm(GemmLayout::kDgrad, t, h, w_.experts, scratch_wide_[0].data(), weight(layer, o.router), d_norm);
    gemm(GemmLayout::kWgrad, w_.experts, h, t, scratch_wide_[0].data(), s.ln2.data(), grad(layer, o.router), true);
  }
  kernels::rmsnorm_backward(s.x_mid.data(), weight(layer, o.gamma2), s.rstd2.data(), d_norm, t, h, d_in, grad(layer, o.gamma2),
                            st);
  if (clock) clock->mark("mlp");
}

void ProxyRank::attention_backward(std::int64_t layer, Saved& s, const std::uint16_t* d_out, std::uint16_t* d_in,
                                   PhaseClock* clock) {
  const Offsets o(params_);
  const AttentionWidths a = attention_widths(w_);
  const std::int64_t t = w_.tokens_per_rank, h = w_.hidden;
  cudaStream_t st = stream_.get();
  gemm(GemmLayout::kDgrad, t, a.out, h, d_out, weight(layer, o.proj), scratch_wide_[1].data());
  gemm(GemmLayout::kWgrad, h, a.out, t, d_out, s.ctx.data(), grad(layer, o.proj), true);
  core_backward(s);
  std::uint16_t* d_qkv = scratch_wide_[0].data();  // the core's input gradients, laid out as the forward's q|k|v
  if (!a.mla) {
    gemm(GemmLayout::kDgrad, t, h, a.qkv(), d_qkv, weight(layer, o.qkv), grad_norm_.data());
    gemm(GemmLayout::kWgrad, a.qkv(), h, t, d_qkv, s.ln1.data(), grad(layer, o.qkv), true);
  } else {
    std::uint16_t* d_latent = scratch_wide_[1].data();
    std::uint16_t* d_latent_in = scratch_rows_[0].data();
    const std::uint16_t* d_kv = d_qkv + count(t, a.q);
    gemm(GemmLayout::kDgrad, t, w_.kv_lora_rank, a.kv_up, d_kv, weight(layer, o.kv_up), d_latent);
    gemm(GemmLayout::kWgrad, a.kv_up, w_.kv_lora_rank, t, d_kv, s.kv_latent_norm.data(), grad(layer, o.kv_up), true);
    kernels::rmsnorm_backward(s.kv_latent.data(), weight(layer, o.kv_norm), s.kv_rstd.data(), d_latent, t, w_.kv_lora_rank,
                              d_latent_in, grad(layer, o.kv_norm), st);
    gemm(GemmLayout::kDgrad, t, h, a.kv_down, d_latent_in, weight(layer, o.kv_down), grad_norm_.data());
    gemm(GemmLayout::kWgrad, a.kv_down, h, t, d_latent_in, s.ln1.data(), grad(layer, o.kv_down), true);
    if (w_.q_lora_rank > 0) {
      gemm(GemmLayout::kDgrad, t, w_.q_lora_rank, a.q, d_qkv, weight(layer, o.q_up), d_latent);
      gemm(GemmLayout::kWgrad, a.q, w_.q_lora_rank, t, d_qkv, s.q_latent_norm.data(), grad(layer, o.q_up), true);
      kernels::rmsnorm_backward(s.q_latent.data(), weight(layer, o.q_norm), s.q_rstd.data(), d_latent, t, w_.q_lora_rank,
                                d_latent_in, grad(layer, o.q_norm), st);
      // Added to the kv path's input gradient in Megatron; the add is left out.
      gemm(GemmLayout::kDgrad, t, h, w_.q_lora_rank, d_latent_in, weight(layer, o.q_down), grad_norm_.data());
      gemm(GemmLayout::kWgrad, w_.q_lora_rank, h, t, d_latent_in, s.ln1.data(), grad(layer, o.q_down), true);
    } else {
      gemm(GemmLayout::kDgrad, t, h, a.q, d_qkv, weight(layer, o.qkv), grad_norm_.data());
      gemm(GemmLayout::kWgrad, a.q, h, t, d_qkv, s.ln1.data(), grad(layer, o.qkv), true);
    }
  }
  kernels::rmsnorm_backward(inputs_[static_cast<std::size_t>(layer)].data(), weight(layer, o.gamma1), s.rstd1.data(),
                            grad_norm_.data(), t, h, d_in, grad(layer, o.gamma1), stream_.get());
  if (clock) clock->mark("attention");
}

void ProxyRank::backward_layer(std::int64_t layer, std::int64_t mb, const std::uint16_t* d_out, std::uint16_t* d_in,
                               PhaseClock* clock) {
  if (full_recompute_) forward_layer(layer, mb, clock);  // rebuild what the layer would have saved
  Saved& s = saved(layer);
  mlp_backward(layer, mb, s, d_out, grad_mid_.data(), clock);
  attention_backward(layer, s, grad_mid_.data(), d_in, clock);
}

void ProxyRank::step(PhaseClock* clock) {
  cudaStream_t st = stream_.get();
  if (clock) clock->start_step();
  for (auto& g : grads_) MOESIM_CUDA_CHECK(cudaMemsetAsync(g.data(), 0, g.bytes(), st));
  if (clock) clock->mark("optimizer");
  for (std::int64_t mb = 0; mb < w_.microbatches; ++mb) {
    for (std::int64_t l = 0; l < w_.layers; ++l) forward_layer(l, mb, clock);
    int at = 0;
    for (std::int64_t l = w_.layers - 1; l >= 0; --l) {
      backward_layer(l, mb, grad_io_[at].data(), grad_io_[1 - at].data(), clock);
      at = 1 - at;
    }
  }
  // Gradients: dense ones over every DP rank, the experts' over the ranks holding the same experts.
  const auto dense = static_cast<std::size_t>(params_.dense()), expert = static_cast<std::size_t>(params_.expert());
  if (comms_.dp != nullptr || comms_.expert_dp != nullptr) {
    MOESIM_NCCL_CHECK(ncclGroupStart());
    for (auto& g : grads_) {
      if (comms_.dp != nullptr) MOESIM_NCCL_CHECK(ncclAllReduce(g.data(), g.data(), dense, ncclFloat32, ncclSum, comms_.dp, st));
      if (comms_.expert_dp != nullptr && expert > 0) {
        MOESIM_NCCL_CHECK(ncclAllReduce(g.data() + dense, g.data() + dense, expert, ncclFloat32, ncclSum, comms_.expert_dp, st));
      }
    }
    MOESIM_NCCL_CHECK(ncclGroupEnd());
    if (clock) clock->mark("dp_comm");
  }
  kernels::AdamParams adam;
  adam.step = ++adam_step_;
  for (std::size_t l = 0; l < weights_.size(); ++l) {
    kernels::adam_update(master_[l].data(), adam_m_[l].data(), adam_v_[l].data(), grads_[l].data(), weights_[l].data(),
                         static_cast<std::int64_t>(weights_[l].size()), adam, st);
  }
  if (clock) clock->mark("optimizer");
}

}  // namespace moesim::proxy
