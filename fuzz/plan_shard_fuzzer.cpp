// The partial searches `moesim merge` and `moesim plan --resume` read back: plan shards
// (moesim.plan-shard/1) and sweep checkpoints (moesim.plan-checkpoint/1).
#include "config/plan_loader.hpp"
#include "fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moesim;
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_accept_or_refuse([&] { (void)config::parse_plan_shard(text, fuzz::kInputName); });
  fuzz::expect_accept_or_refuse([&] { (void)config::parse_plan_checkpoint(text, fuzz::kInputName); });
  return 0;
}
