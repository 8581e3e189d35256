#include <doctest/doctest.h>

#include "cli/progress_line.hpp"

using moesim::cli::ProgressLine;

TEST_CASE("a progress line says the phase, percent, counts, rate and time left") {
  CHECK(ProgressLine::format("searching", 46267, 110160, "candidates", 3.5) ==
        "searching  42.0% 46.3k/110.2k candidates 13.2k/s ETA 5s");
  CHECK(ProgressLine::format("simulating finalists", 3, 8, "simulations", 90) ==
        "simulating finalists  37.5% 3/8 simulations 0.033/s ETA 2m30s");
  // Nothing done yet: no rate to extrapolate from.
  CHECK(ProgressLine::format("simulating", 0, 524288, "pipeline passes", 1) == "simulating   0.0% 0/524.3k pipeline passes");
  CHECK(ProgressLine::format("searching", 10, 10, "candidates", 2) == "searching 100.0% 10/10 candidates 5/s ETA 0s");
  CHECK(ProgressLine::format("searching", 1, 3600 * 5 + 1, "candidates", 1) ==
        "searching   0.0% 1/18.0k candidates 1/s ETA 5h00m");
}

TEST_CASE("a progress line draws nothing where stderr is not a terminal") {
  ProgressLine line(true);  // the test's stderr is a file or a pipe under ctest
  line.update("searching", 1, 2, "candidates");
  line.clear();
}
