#pragma once
// Megatron-LM's command-line flags that moesim writes (scenario/megatron_args.cpp) and reads
// (scenario/megatron_import.cpp), each spelled once. The names are Megatron-LM's
// (megatron/training/arguments.py); tests/scenario/megatron_args_test.cpp checks every emitted one
// against tests/data/megatron-lm-arguments.txt.
#include <string_view>

namespace moesim {

namespace megatron_flag {
inline constexpr std::string_view kNumLayers = "--num-layers", kHiddenSize = "--hidden-size",
                           kFfnHiddenSize = "--ffn-hidden-size", kHeads = "--num-attention-heads",
                           kGqa = "--group-query-attention", kQueryGroups = "--num-query-groups",
                           kKvChannels = "--kv-channels", kSwiglu = "--swiglu", kVocab = "--vocab-size",
                           kMaxPositions = "--max-position-embeddings", kSeqLength = "--seq-length",
                           kUntie = "--untie-embeddings-and-output-weights", kNoBias = "--disable-bias-linear",
                           kHiddenDropout = "--hidden-dropout", kExperts = "--num-experts",
                           kTopk = "--moe-router-topk", kMoeFfn = "--moe-ffn-hidden-size",
                           kSharedExpert = "--moe-shared-expert-intermediate-size", kLayerFreq = "--moe-layer-freq",
                           kMtp = "--mtp-num-layers", kMla = "--multi-latent-attention", kQLora = "--q-lora-rank",
                           kKvLora = "--kv-lora-rank", kQkHead = "--qk-head-dim", kQkPos = "--qk-pos-emb-head-dim",
                           kVHead = "--v-head-dim";
inline constexpr std::string_view kTp = "--tensor-model-parallel-size", kPp = "--pipeline-model-parallel-size",
                           kVpp = "--num-virtual-stages-per-pipeline-rank",
                           kLayersPerVirtualStage = "--num-layers-per-virtual-pipeline-stage",
                           kCp = "--context-parallel-size", kEp = "--expert-model-parallel-size",
                           kEtp = "--expert-tensor-parallel-size", kSp = "--sequence-parallel",
                           kTpOverlap = "--tp-comm-overlap",
                           kEmbeddingSlot = "--account-for-embedding-in-pipeline-split",
                           kLossSlot = "--account-for-loss-in-pipeline-split";
inline constexpr std::string_view kMicroBatch = "--micro-batch-size", kGlobalBatch = "--global-batch-size";
inline constexpr std::string_view kBf16 = "--bf16", kFp16 = "--fp16", kFp8Format = "--fp8-format",
                           kFp8Recipe = "--fp8-recipe", kFp4Format = "--fp4-format", kFp4Recipe = "--fp4-recipe";
inline constexpr std::string_view kRecomputeGranularity = "--recompute-granularity", kRecomputeMethod = "--recompute-method",
                           kRecomputeLayers = "--recompute-num-layers", kRecomputeModules = "--recompute-modules";
inline constexpr std::string_view kDispatcher = "--moe-token-dispatcher-type", kFlexBackend = "--moe-flex-dispatcher-backend",
                           kEnableDeepep = "--moe-enable-deepep", kCapacity = "--moe-expert-capacity-factor",
                           kPad = "--moe-pad-expert-input-to-capacity", kGroupedGemm = "--moe-grouped-gemm",
                           kA2aOverlap = "--overlap-moe-expert-parallel-comm", kDeepepSms = "--moe-deepep-num-sms",
                           kHybridepSms = "--moe-hybridep-num-sms";
inline constexpr std::string_view kDistOpt = "--use-distributed-optimizer", kOverlapGrad = "--overlap-grad-reduce",
                           kOverlapParam = "--overlap-param-gather", kFp8Gather = "--fp8-param-gather",
                           kFp4Gather = "--fp4-param-gather", kGradBf16 = "--grad-reduce-in-bf16",
                           kGradFp32 = "--accumulate-allreduce-grads-in-fp32",
                           kPrecisionAware = "--use-precision-aware-optimizer";
/// --cuda-graph-modules names Transformer Engine's graph scopes; --cuda-graph-scope is its deprecated
/// alias (still read).
inline constexpr std::string_view kGraphImpl = "--cuda-graph-impl", kGraphModules = "--cuda-graph-modules",
                                  kGraphScope = "--cuda-graph-scope";
inline constexpr std::string_view kCrossEntropyFusion = "--cross-entropy-loss-fusion", kPermuteFusion = "--moe-permute-fusion",
                           kRouterFusion = "--moe-router-fusion", kNoSwigluFusion = "--no-bias-swiglu-fusion",
                           kNoGeluFusion = "--no-bias-gelu-fusion", kNoRopeFusion = "--no-rope-fusion",
                           kNoGradAccFusion = "--no-gradient-accumulation-fusion",
                           kNoSoftmaxFusion = "--no-masked-softmax-fusion";
inline constexpr std::string_view kActivationOffload = "--fine-grained-activation-offloading",
                           kOffloadModules = "--offload-modules", kOptimizerOffload = "--optimizer-cpu-offload",
                           kOptimizerOffloadFraction = "--optimizer-offload-fraction";
inline constexpr std::string_view kAttentionBackend = "--attention-backend";
}  // namespace megatron_flag

/// Megatron's dispatcher type of DeepEP and HybridEP (--moe-token-dispatcher-type flex, with the
/// backend named by --moe-flex-dispatcher-backend).
inline constexpr std::string_view kMegatronFlexDispatcher = "flex";

}  // namespace moesim
