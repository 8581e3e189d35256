#include "program/kernel_speedup.hpp"

#include <vector>

namespace moesim::program {

void apply_kernel_speedup(OpProgram& program, const WhatIfSpec& whatif) {
  if (!whatif.any()) return;
  for (std::vector<LayerOp>* pass : {&program.forward, &program.backward}) {
    for (LayerOp& op : *pass) {
      const OpClassInfo* c = op_class_of(op.name);
      if (c == nullptr) continue;
      const double factor = whatif.speedup(c->op_class);
      op.seconds /= factor;
      op.latency_s /= factor;
      op.speedup = factor;
    }
  }
}

}  // namespace moesim::program
