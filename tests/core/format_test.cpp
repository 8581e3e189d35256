#include <doctest/doctest.h>

#include "core/format.hpp"

using namespace moesim;

TEST_CASE("did_you_mean offers the names a typo is closest to, and nothing for a stranger") {
  const std::vector<std::string> systems{"dgx-a100", "dgx-b200", "gb200-nvl72", "hgx-h100", "hgx-h200"};
  CHECK(did_you_mean("hgx-h10", systems) == " (did you mean \"hgx-h100\"?)");
  CHECK(did_you_mean("HGX-H100", systems) == " (did you mean \"hgx-h100\"?)");  // case does not count
  CHECK(did_you_mean("dgx-h100", systems) == " (did you mean \"dgx-a100\" or \"hgx-h100\"?)");  // ties, all
  CHECK(did_you_mean("gb200", systems) == " (did you mean \"gb200-nvl72\"?)");  // a prefix of one
  CHECK(did_you_mean("tpu-v5", systems).empty());
  CHECK(did_you_mean("", systems).empty());
  CHECK(did_you_mean(std::string(200, 'x'), systems).empty());
  // More than three equally close: none is a better guess than the list the message already gives.
  CHECK(did_you_mean("a", {"b", "c", "d", "e"}).empty());
}
