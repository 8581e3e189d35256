#pragma once
// The calibration request (schema moesim.calibration-request/1): the shapes a model and scenario
// will run, written by `moesim calibrate --model/--scenario` and measured on top of the generic grid.
// Loaded strictly: an unknown key, a wrong type or an out-of-range value is refused with the file,
// the JSON path and the rule (moesim::InputError).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace moesim::calibrate {

inline constexpr const char* kRequestSchema = "moesim.calibration-request/1";

struct GemmRequest {
  std::string precision;  ///< bf16 | fp8 | mxfp8 | nvfp4
  std::int64_t m = 0, n = 0, k = 0;
};

struct GroupedGemmRequest {
  std::string precision;  ///< bf16
  std::vector<int> tokens;
  std::int64_t n = 0, k = 0;
};

struct AttentionRequest {
  int batch_heads = 0, seq = 0, head_dim = 0;
  bool causal = true;
};

struct KernelRequest {
  std::string kernel;  ///< permute | unpermute | router_softmax_topk | router_sigmoid_topk | cast_fp8
  int tokens = 0, hidden = 0, experts = 0, topk = 0;  ///< 0 where the kernel takes no such dimension
};

struct Request {
  std::vector<GemmRequest> gemm;
  std::vector<GroupedGemmRequest> grouped_gemm;
  std::vector<AttentionRequest> attention;
  std::vector<KernelRequest> kernels;
};

/// Parses request text; errors name `file`. Throws moesim::InputError.
[[nodiscard]] Request parse_request(std::string_view text, const std::string& file);

/// Reads and parses a request file. Throws moesim::InputError (also when it cannot be read).
[[nodiscard]] Request load_request(const std::filesystem::path& path);

}  // namespace moesim::calibrate
