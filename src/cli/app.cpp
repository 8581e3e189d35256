#include "cli/app.hpp"

#include <cstdio>

namespace moesim::cli {
int run(int, char**) {
  std::puts("moesim: under construction");
  return 0;
}
}  // namespace moesim::cli
