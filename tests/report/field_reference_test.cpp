// docs/scenario-fields.md is the output of `moesim scenarios fields`, which writes it from the field
// tables: when a field changes, this test fails until the page is regenerated
// (build/moesim scenarios fields > docs/scenario-fields.md).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "../test_paths.hpp"
#include "report/field_reference.hpp"

using namespace moesim;

TEST_CASE("docs/scenario-fields.md is the generated field reference") {
  std::ifstream in(test::source_dir() / "docs" / "scenario-fields.md");
  REQUIRE(in.good());
  std::stringstream page;
  page << in.rdbuf();
  const std::string generated = report::scenario_field_reference();
  CHECK(page.str() == generated);
}

TEST_CASE("the field reference: every object gets a table, derived and required defaults are named") {
  const std::string ref = report::scenario_field_reference();
  for (const char* heading : {"## top level", "## `training`", "## `parallel`", "## `moe`", "## `optimizer`"}) {
    CAPTURE(heading);
    CHECK(ref.find(heading) != std::string::npos);
  }
  CHECK(ref.find("| `parallel.etp` | integer | = tp | 1 to 1048576 |") != std::string::npos);
  CHECK(ref.find("| `training.seq_length` | integer | required | 1 to 16777216 | tokens per sequence (`moesim plan --seq`) |") !=
        std::string::npos);
  CHECK(ref.find("| `moe.capacity_factor` | number or null | null | (0, 1024] |") != std::string::npos);
  CHECK(ref.find("| `moe.dispatcher` | string | \"alltoall\" | alltoall, allgather, deepep, hybridep |") != std::string::npos);
}

TEST_CASE("the field reference documents the plan request: its knobs, their ranges and flags") {
  const std::string ref = report::scenario_field_reference();
  CHECK(ref.find("## `request`") != std::string::npos);
  CHECK(ref.find("## `request.space`") != std::string::npos);
  // A knob takes its scenario field's range: micro-batch sizes as training.micro_batch_size.
  CHECK(ref.find("| `space.micro_batch_size` | array of integer | = 1, 2, 4 | each 1 to 65536 |") != std::string::npos);
  CHECK(ref.find("| `top` | integer | 10 | 1 to 100000 | rows of the ranked table (`moesim plan --top`) |") !=
        std::string::npos);
  CHECK(ref.find("each one of alltoall, allgather, deepep, hybridep") != std::string::npos);
}
