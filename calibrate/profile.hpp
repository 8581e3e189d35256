#pragma once
// The calibration profile (schema moesim.profile/1, documented in README.md) as plain structs, and
// its JSON form. src/config's loader reads that file; the field names are fixed.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace moesim::calibrate {

inline constexpr const char* kProfileSchema = "moesim.profile/1";

struct Timing {
  double median_us = 0;
  double spread_us = 0;  ///< p90 - p10 of the repeats
  int repeats = 0;
};

struct Provenance {
  std::string source = "measured";
  std::string gpu;          ///< moesim GPU preset name (h200-sxm, ...) or, when none matches, the device name
  std::string device_name;
  int sm_count = 0;
  int sm_clock_mhz = 0;
  int memory_clock_mhz = 0;
  int gpus_visible = 0;
  std::string driver, cuda_runtime, cublas, nccl;
  std::string date;         ///< UTC, ISO-8601
  std::string host;
  std::string command;
  std::vector<std::string> citations;
};

struct GemmRow {
  std::string precision;  ///< bf16 | fp8 | mxfp8 | nvfp4
  std::int64_t m = 0, n = 0, k = 0;
  Timing timing;          ///< of the heuristic's first choice
  std::string algorithm = "heuristic#0";
  double best_algorithm_us = 0;  ///< fastest of the heuristic's top algorithms (median)
};

struct GroupedGemmRow {
  std::string precision = "bf16";
  std::string implementation;  ///< grouped_batched | loop
  std::vector<int> tokens;
  std::int64_t n = 0, k = 0;
  Timing timing;
};

struct KernelRow {
  std::string kernel;  ///< copy | permute | unpermute | cast_fp8 | router_softmax_topk | router_sigmoid_topk
  std::int64_t bytes = 0;  ///< through HBM, read + written
  std::vector<std::pair<std::string, std::int64_t>> shape;
  Timing timing;
};

struct AttentionRow {
  /// flash | unfused: which kernel was timed (moesim corrects that path only); kernels/attention is unfused.
  std::string implementation;
  std::string direction;  ///< forward | backward
  int batch_heads = 0, seq = 0, head_dim = 0;
  bool causal = true;
  Timing timing;
};

struct CollectiveRow {
  std::string op;  ///< all_reduce | all_gather | reduce_scatter | all_to_all | send_recv
  int ranks = 0, ranks_per_node = 0;
  std::int64_t bytes = 0;
  Timing timing;
  double algbw_gbps = 0, busbw_gbps = 0;
};

struct Profile {
  Provenance provenance;
  std::vector<GemmRow> gemm;
  std::vector<GroupedGemmRow> grouped_gemm;
  std::vector<KernelRow> kernels;
  std::vector<AttentionRow> attention;
  std::vector<CollectiveRow> collectives;
};

/// The profile as JSON text (2-space indent, fields in the schema's order, trailing newline).
[[nodiscard]] std::string profile_to_json(const Profile& profile);

}  // namespace moesim::calibrate
