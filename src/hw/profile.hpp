#pragma once
// A calibration profile (`moesim.profile/1`, docs/profile.md): kernel and collective times measured on
// one GPU type (by `moesim calibrate`) or taken from published microbenchmarks, which compute/ and
// collective/ interpolate in instead of the datasheet roofline. config/profile_loader fills it
// strictly; this header only holds the data (plus a cache the cost models fill on first use).
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/named_enum.hpp"
#include "core/precision.hpp"
#include "hw/gpu_spec.hpp"

namespace moesim::hw {

/// The two file schemas this header holds the data of: the profile (config/profile_loader reads it,
/// report/profile_json writes it) and the calibration request (report/calibration_request_json writes
/// it, config/calibration_request_loader reads it). calibrate/ uses the same readers and writers.
inline constexpr const char* kProfileSchema = "moesim.profile/1";
inline constexpr const char* kCalibrationRequestSchema = "moesim.calibration-request/1";

enum class ProfileSource : std::uint8_t { kMeasured, kPublished };
inline constexpr auto kProfileSourceNames = std::to_array<EnumName<ProfileSource>>(
    {{ProfileSource::kMeasured, "measured"}, {ProfileSource::kPublished, "published"}});

/// Where the figures come from. For a published profile the numeric device fields are unknown
/// (nullopt) and the version strings may read "unknown"; its citations say where each row is from.
struct ProfileProvenance {
  ProfileSource source = ProfileSource::kMeasured;
  std::string gpu;          ///< moesim GPU preset name ("h200-sxm"); must equal the scenario's GPU
  std::string device_name;  ///< as the driver names it ("NVIDIA H200")
  std::optional<std::int64_t> sm_count;
  std::optional<double> sm_clock_mhz;
  std::optional<double> memory_clock_mhz;
  std::optional<std::int64_t> gpus_visible;
  std::string driver, cuda_runtime, cublas, nccl;
  std::string date;  ///< UTC ISO-8601
  std::string host, command;
  std::vector<std::string> citations;
};

/// One timed configuration: median of `repeats` timings, spread = p90 − p10 (microseconds).
struct ProfileTiming {
  double median_us = 0;
  double spread_us = 0;
  std::int64_t repeats = 1;
};

/// C[m×n] = A[m×k]·B[k×n] in one precision.
struct ProfileGemm {
  Precision precision = Precision::kBf16;
  std::int64_t m = 0, n = 0, k = 0;
  ProfileTiming time;
  std::string algorithm;          ///< the heuristic's choice (cuBLASLt), as the calibrator names it
  double best_algorithm_us = 0;   ///< fastest algorithm the calibrator tried for this shape
};

/// How a grouped GEMM over experts ran: one grouped-batched launch, or one GEMM per expert.
enum class GroupedImplementation : std::uint8_t { kGroupedBatched, kLoop };
inline constexpr auto kGroupedImplementationNames = std::to_array<EnumName<GroupedImplementation>>(
    {{GroupedImplementation::kGroupedBatched, "grouped_batched"}, {GroupedImplementation::kLoop, "loop"}});

/// Experts' ragged token loads × their own k×n weights (the forward problem).
struct ProfileGroupedGemm {
  Precision precision = Precision::kBf16;
  GroupedImplementation implementation = GroupedImplementation::kGroupedBatched;
  std::vector<std::int64_t> tokens;  ///< rows per expert
  std::int64_t n = 0, k = 0;
  ProfileTiming time;
};

/// Memory-bound kernels the calibrator measures.
enum class MemoryKernel : std::uint8_t { kCopy, kPermute, kUnpermute, kCastFp8, kRouterSoftmaxTopk, kRouterSigmoidTopk };
/// In enum order: the profile tables index by the enum's value.
inline constexpr auto kMemoryKernelNames = std::to_array<EnumName<MemoryKernel>>(
    {{MemoryKernel::kCopy, "copy"}, {MemoryKernel::kPermute, "permute"}, {MemoryKernel::kUnpermute, "unpermute"},
     {MemoryKernel::kCastFp8, "cast_fp8"}, {MemoryKernel::kRouterSoftmaxTopk, "router_softmax_topk"},
     {MemoryKernel::kRouterSigmoidTopk, "router_sigmoid_topk"}});
inline constexpr std::size_t kMemoryKernelCount = kMemoryKernelNames.size();

struct ProfileKernel {
  MemoryKernel kernel = MemoryKernel::kCopy;
  std::int64_t bytes = 0;  ///< HBM bytes read + written
  std::vector<std::pair<std::string, std::int64_t>> shape;  ///< as measured, by name (sorted)
  ProfileTiming time;
};

enum class AttentionDirection : std::uint8_t { kForward, kBackward };
inline constexpr auto kAttentionDirectionNames = std::to_array<EnumName<AttentionDirection>>(
    {{AttentionDirection::kForward, "forward"}, {AttentionDirection::kBackward, "backward"}});

/// Which attention kernel a row timed: a fused FlashAttention-style core, or the unfused one (batched
/// QKᵀ and PV GEMMs around a fused scale-mask-softmax, no dropout: kernels/attention). They correct
/// different cost-model paths, so a row must say which it is.
enum class AttentionImplementation : std::uint8_t { kFlash, kUnfused };
inline constexpr auto kAttentionImplementationNames = std::to_array<EnumName<AttentionImplementation>>(
    {{AttentionImplementation::kFlash, "flash"}, {AttentionImplementation::kUnfused, "unfused"}});
inline constexpr std::size_t kAttentionImplementationCount = kAttentionImplementationNames.size();

/// Attention core over batch × heads sequences of `seq` tokens, query/key/value head width `head_dim`.
struct ProfileAttention {
  AttentionImplementation implementation = AttentionImplementation::kFlash;
  AttentionDirection direction = AttentionDirection::kForward;
  std::int64_t batch_heads = 0, seq = 0, head_dim = 0;
  bool causal = true;
  ProfileTiming time;
};

/// NCCL collectives, in the order of collective::Op.
enum class ProfileCollectiveOp : std::uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };
inline constexpr auto kProfileCollectiveOpNames = std::to_array<EnumName<ProfileCollectiveOp>>(
    {{ProfileCollectiveOp::kAllReduce, "all_reduce"}, {ProfileCollectiveOp::kAllGather, "all_gather"},
     {ProfileCollectiveOp::kReduceScatter, "reduce_scatter"}, {ProfileCollectiveOp::kAllToAll, "all_to_all"},
     {ProfileCollectiveOp::kSendRecv, "send_recv"}});
inline constexpr std::size_t kProfileCollectiveOpCount = kProfileCollectiveOpNames.size();

/// One nccl-tests point: `bytes` is nccl-tests' "size", busbw = algbw × the op's bus factor.
struct ProfileCollective {
  ProfileCollectiveOp op = ProfileCollectiveOp::kAllReduce;
  std::int64_t ranks = 0, ranks_per_node = 0;
  std::int64_t bytes = 0;
  ProfileTiming time;
  double algbw_gbps = 0, busbw_gbps = 0;
};

/// Lookup tables a cost model derives from the profile (compute/ per GPU spec, collective/ once),
/// built on first use and shared by every cost model made from this profile — the planner makes one
/// per candidate. The owning module stores its own type behind the void pointer.
class ProfileDerivedCache {
 public:
  /// The entry built for a GPU spec `same` accepts, or the one `build()` makes for `gpu` (and keeps).
  template <class T, class Same, class Build>
  std::shared_ptr<const T> for_gpu(const GpuSpec& gpu, Same&& same, Build&& build) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [key, value] : per_gpu_) {
      if (same(key, gpu)) return std::static_pointer_cast<const T>(value);
    }
    std::shared_ptr<const T> made = build();
    per_gpu_.emplace_back(gpu, made);
    return made;
  }
  /// The GPU-independent entry, built by `build()` the first time.
  template <class T, class Build>
  std::shared_ptr<const T> shared(Build&& build) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!shared_) shared_ = build();
    return std::static_pointer_cast<const T>(shared_);
  }

 private:
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<GpuSpec, std::shared_ptr<const void>>> per_gpu_;
  mutable std::shared_ptr<const void> shared_;
};

struct Profile {
  /// How the scenario named it ("h100-published", "profiles/h200.json"), for warnings.
  std::string name;
  std::string file;  ///< the file it was read from ("calibrate/profiles/x.json" for a checked-in one)
  ProfileProvenance provenance;
  std::vector<ProfileGemm> gemm;
  std::vector<ProfileGroupedGemm> grouped_gemm;
  std::vector<ProfileKernel> kernels;
  std::vector<ProfileAttention> attention;
  std::vector<ProfileCollective> collectives;

  ProfileDerivedCache derived;  ///< not part of the data: compute/ and collective/ fill it
};

/// What the calibrate binary can measure, so what a calibration request may ask: calibrate/ refuses a
/// request beyond them, program/calibration_request leaves a scenario's shapes beyond them out (and
/// counts them) rather than failing the whole calibration; such shapes keep the roofline. Declared once
/// here so the writer and the reader of a request cannot disagree. Far above any real model's shapes,
/// they keep every product of dimensions well inside 64 bits and every cuBLAS dimension inside int.
namespace calibration_limits {
inline constexpr std::int64_t kMaxDim = std::int64_t{1} << 20;           ///< GEMM m, n, k; tokens; hidden
inline constexpr std::int64_t kMaxExperts = 1024;                        ///< experts (token counts) per grouped GEMM
inline constexpr std::int64_t kMaxPermuteExperts = kMaxExperts * 64;     ///< experts a permute/unpermute routes to
inline constexpr std::int64_t kMaxAttentionBatchHeads = 65'536;          ///< batch × heads of one attention call
inline constexpr std::int64_t kMaxAttentionSeq = 131'072;                ///< tokens per sequence
inline constexpr std::int64_t kMaxAttentionHeadDim = 1024;
inline constexpr std::int64_t kMaxRouterExperts = 512;                   ///< the router kernel's experts
inline constexpr std::int64_t kMaxRouterTopk = 16;                       ///< and its top-k
/// The GEMM precisions it times (cuBLASLt; not fp16, not blockwise FP8), in the order it times them.
inline constexpr std::array<Precision, 4> kGemmPrecisions{Precision::kBf16, Precision::kFp8, Precision::kMxfp8,
                                                          Precision::kNvfp4};
/// Grouped GEMMs it times in BF16 only: a low-precision scenario's expert shapes are requested in BF16.
inline constexpr Precision kGroupedGemmPrecision = Precision::kBf16;
}  // namespace calibration_limits

/// What `moesim calibrate` asks the calibrate binary to measure (`moesim.calibration-request/1`,
/// docs/profile.md): the shapes a model or scenario runs, besides the binary's own generic grid.
struct CalibrationRequest {
  struct Gemm {
    Precision precision = Precision::kBf16;
    std::int64_t m = 0, n = 0, k = 0;
  };
  struct Grouped {
    Precision precision = Precision::kBf16;
    std::vector<std::int64_t> tokens;
    std::int64_t n = 0, k = 0;
  };
  struct Attention {
    std::int64_t batch_heads = 0, seq = 0, head_dim = 0;
    bool causal = true;
  };
  struct Kernel {
    MemoryKernel kernel = MemoryKernel::kPermute;
    std::int64_t tokens = 0, hidden = 0, experts = 0, topk = 0;
  };
  std::vector<Gemm> gemm;
  std::vector<Grouped> grouped_gemm;
  std::vector<Attention> attention;
  std::vector<Kernel> kernels;
};

[[nodiscard]] std::string_view to_string(ProfileSource s);
[[nodiscard]] std::string_view to_string(GroupedImplementation g);
[[nodiscard]] std::string_view to_string(MemoryKernel k);
[[nodiscard]] std::string_view to_string(AttentionDirection d);
[[nodiscard]] std::string_view to_string(AttentionImplementation i);
[[nodiscard]] std::string_view to_string(ProfileCollectiveOp op);
/// The precisions a profile row may have, in the order its reader lists them: every one but fp8-blockwise.
inline constexpr std::array<Precision, 5> kProfilePrecisions{Precision::kBf16, Precision::kFp16, Precision::kFp8,
                                                             Precision::kMxfp8, Precision::kNvfp4};
/// The profile's precision spelling: "bf16", "fp16", "fp8", "mxfp8", "nvfp4" (nullopt: not a profile precision).
[[nodiscard]] std::optional<std::string_view> profile_precision_name(Precision p);

}  // namespace moesim::hw
