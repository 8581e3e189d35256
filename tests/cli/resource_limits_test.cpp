// Issue 11: absurd sizes are refused with a clear message before any allocation, not after an OOM.
// Each field's own bound is checked by the loader (tests/invalid/absurd-*.json); this is the case
// where every field is in bounds but their product is not.
#include <doctest/doctest.h>

#include "../run_command.hpp"
#include "../test_paths.hpp"

using namespace moesim;

TEST_CASE("a scenario too large to simulate op by op is refused at once, under a 2 GiB address-space limit") {
  // ulimit -v: an attempt to allocate the ~80 GB schedule would fail with bad_alloc (exit 1), not
  // with the message. Sanitizer builds reserve terabytes of shadow address space, so skip the limit there.
  const std::string limit = std::getenv("ASAN_OPTIONS") != nullptr ? "" : "ulimit -v 2000000; ";
  const auto r = test::run_command(limit + test::moesim_binary() + " simulate tests/data/too-large-to-simulate.json",
                                   test::source_dir().string());
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "moesim: error: tests/data/too-large-to-simulate.json: at /parallel: value 4096 simulated ranks × 2 × 262144 "
        "micro-batches × 1 layers per stage = 2.15e+09 layer passes: too large to simulate op by op (at most 1e+07 layer "
        "passes); allowed: fidelity estimate, or fewer pipeline stages, micro-batches per step or (under skewed routing) EP "
        "ranks\n");
  // The closed-form estimate answers the same question.
  const auto e = test::run_command(limit + test::moesim_binary() + " simulate tests/data/too-large-to-simulate.json --fidelity estimate -q",
                                   test::source_dir().string());
  CHECK(e.exit_code == 0);
}
