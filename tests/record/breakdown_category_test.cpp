// The breakdown categories: one name each, and Breakdown::seconds reaching the field of each.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "record/breakdown_category.hpp"
#include "record/result.hpp"

using namespace moesim;

TEST_CASE("breakdown category names round-trip, in Breakdown's field order") {
  CHECK(names_of(kBreakdownCategoryNames) ==
        std::vector<std::string>{"compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "offload_comm",
                                 "bubble", "exposed_comm", "optimizer", "host_idle"});
  for (BreakdownCategory c : values_of(kBreakdownCategoryNames)) {
    CHECK(value_of(kBreakdownCategoryNames, to_string(c)) == c);
  }
}

TEST_CASE("Breakdown::seconds reaches each category's own field") {
  Breakdown b;
  double v = 1;
  for (BreakdownCategory c : values_of(kBreakdownCategoryNames)) b.seconds(c) = v++;
  CHECK(b.compute == 1);
  CHECK(b.tp_comm == 2);
  CHECK(b.cp_comm == 3);
  CHECK(b.ep_comm == 4);
  CHECK(b.pp_comm == 5);
  CHECK(b.dp_comm == 6);
  CHECK(b.offload_comm == 7);
  CHECK(b.bubble == 8);
  CHECK(b.exposed_comm == 9);
  CHECK(b.optimizer == 10);
  CHECK(b.host_idle == 11);
  CHECK(b.moe_imbalance == 1.0);  // not a seconds category: untouched
  const Breakdown& read = b;
  std::set<double> seen;
  for (BreakdownCategory c : values_of(kBreakdownCategoryNames)) seen.insert(read.seconds(c));
  CHECK(seen.size() == kBreakdownCategoryNames.size());
}
