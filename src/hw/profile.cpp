#include "hw/profile.hpp"

namespace moesim::hw {

std::string_view to_string(ProfileSource s) {
  switch (s) {
    case ProfileSource::kMeasured: return "measured";
    case ProfileSource::kPublished: return "published";
  }
  return "?";
}

std::string_view to_string(GroupedImplementation g) {
  switch (g) {
    case GroupedImplementation::kGroupedBatched: return "grouped_batched";
    case GroupedImplementation::kLoop: return "loop";
  }
  return "?";
}

std::string_view to_string(MemoryKernel k) {
  switch (k) {
    case MemoryKernel::kCopy: return "copy";
    case MemoryKernel::kPermute: return "permute";
    case MemoryKernel::kUnpermute: return "unpermute";
    case MemoryKernel::kCastFp8: return "cast_fp8";
    case MemoryKernel::kRouterSoftmaxTopk: return "router_softmax_topk";
    case MemoryKernel::kRouterSigmoidTopk: return "router_sigmoid_topk";
  }
  return "?";
}

std::string_view to_string(AttentionDirection d) {
  return d == AttentionDirection::kForward ? "forward" : "backward";
}

std::string_view to_string(AttentionImplementation i) {
  return i == AttentionImplementation::kFlash ? "flash" : "unfused";
}

std::string_view to_string(ProfileCollectiveOp op) {
  switch (op) {
    case ProfileCollectiveOp::kAllReduce: return "all_reduce";
    case ProfileCollectiveOp::kAllGather: return "all_gather";
    case ProfileCollectiveOp::kReduceScatter: return "reduce_scatter";
    case ProfileCollectiveOp::kAllToAll: return "all_to_all";
    case ProfileCollectiveOp::kSendRecv: return "send_recv";
  }
  return "?";
}

std::optional<std::string_view> profile_precision_name(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
    case Precision::kMxfp8: return "mxfp8";
    case Precision::kNvfp4: return "nvfp4";
    case Precision::kFp8Blockwise: break;
  }
  return std::nullopt;
}

}  // namespace moesim::hw
