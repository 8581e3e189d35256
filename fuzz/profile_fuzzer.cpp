// Calibration profiles (moesim.profile/1, docs/profile.md): the strict loader, then — for a profile
// it accepts — the interpolation it feeds, which must give a finite, positive time for shapes inside
// and far outside the measured range (one row, coincident rows and extreme ratios included).
#include <cmath>

#include "compute/grouped_gemm.hpp"
#include "compute/kernel_cost.hpp"
#include "config/hw_loader.hpp"
#include "config/json_reader.hpp"
#include "config/profile_loader.hpp"
#include "fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moesim;
  const std::string text = fuzz::as_text(data, size);
  std::shared_ptr<hw::Profile> profile;
  fuzz::expect_accept_or_refuse([&] { profile = config::parse_profile(config::parse_json_text(text, fuzz::kInputName), fuzz::kInputName); });
  if (!profile) return 0;
  fuzz::expect_accept_or_refuse([&] {
    const hw::GpuSpec gpu = config::load_gpu_preset(profile->provenance.gpu);
    const compute::KernelCostModel kernels(gpu, profile);
    for (const std::int64_t m : {1, 4096, 1 << 22}) {
      for (const Precision p : {Precision::kBf16, Precision::kFp8}) {
        const double t = kernels.gemm({m, 4096, 7168, 1}, p).value();
        if (!std::isfinite(t) || t <= 0) fuzz::fail("profile interpolation", "GEMM time not finite and positive");
      }
    }
    const std::int64_t tokens[] = {0, 17, 4096, 1 << 20};
    const double g = compute::grouped_gemm(kernels, {tokens, 2048, 7168, compute::GemmPart::kForward}, Precision::kBf16).value();
    if (!std::isfinite(g) || g <= 0) fuzz::fail("profile interpolation", "grouped GEMM time not finite and positive");
    const double c = kernels.memory_bound(Bytes(1e9)).value();
    if (!std::isfinite(c) || c <= 0) fuzz::fail("profile interpolation", "memory-bound time not finite and positive");
  });
  return 0;
}
