// An op kind is accounted in, and spelled as, one breakdown category.
#include <doctest/doctest.h>

#include "program/layer_cost.hpp"

using namespace moesim;
using program::OpKind;

TEST_CASE("op kinds map to their breakdown categories and names") {
  CHECK(program::category_of(OpKind::kCompute) == BreakdownCategory::kCompute);
  CHECK(program::category_of(OpKind::kTpComm) == BreakdownCategory::kTpComm);
  CHECK(program::category_of(OpKind::kCpComm) == BreakdownCategory::kCpComm);
  CHECK(program::category_of(OpKind::kEpComm) == BreakdownCategory::kEpComm);
  CHECK(program::category_of(OpKind::kHostIdle) == BreakdownCategory::kHostIdle);
  CHECK(program::to_string(OpKind::kCompute) == "compute");
  CHECK(program::to_string(OpKind::kEpComm) == "ep_comm");
  CHECK(program::to_string(OpKind::kHostIdle) == "host_idle");
}
