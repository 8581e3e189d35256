#pragma once
// A routing spec of one distribution and its one parameter (s for zipf, sigma for lognormal, alpha for
// dirichlet), for the tests of the load model, its expectation and the skew-aware estimate.
#include "scenario/scenario.hpp"

namespace moesim::test {

inline RoutingSpec routing(RoutingDistribution d, double parameter = 0) {
  RoutingSpec r;
  r.distribution = d;
  r.zipf_s = parameter;
  r.lognormal_sigma = parameter;
  r.dirichlet_alpha = parameter;
  return r;
}

}  // namespace moesim::test
