// whatif.kernel_speedup's op classes (scenario/whatif.hpp): docs/whatif.md lists each class with exactly
// its ops, and the lookup by op name finds the class.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "../test_paths.hpp"
#include "scenario/whatif.hpp"

using namespace moesim;

TEST_CASE("docs/whatif.md lists every op class with exactly its ops") {
  std::ifstream in(test::source_dir() / "docs" / "whatif.md");
  std::map<std::string, std::string> documented;  // class → the ops cell as written
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("| `")) continue;
    std::stringstream cells(line.substr(1));
    std::string name, ops;
    std::getline(cells, name, '|');
    std::getline(cells, ops, '|');
    documented[name.substr(name.find('`') + 1, name.rfind('`') - name.find('`') - 1)] = ops;
  }
  CHECK(documented.size() == kOpClassCount);
  for (const OpClassInfo& c : kOpClasses) {
    CAPTURE(c.name);
    REQUIRE(documented.contains(std::string(c.name)));
    std::string expected = " ";
    for (std::size_t i = 0; i < c.ops.size(); ++i) expected += (i > 0 ? ", `" : "`") + std::string(c.ops[i]) + "`";
    CHECK(documented[std::string(c.name)] == expected + " ");
  }
}

TEST_CASE("op_class_of finds an op's class, and none for ops no class scales") {
  CHECK(op_class_of("expert_fc2")->op_class == OpClass::kExpertMlp);
  CHECK(op_class_of("dispatch")->op_class == OpClass::kDispatch);
  CHECK(op_class_of("core_attention")->op_class == OpClass::kAttention);
  CHECK(op_class_of("attn_reduce_scatter") == nullptr);
  CHECK(op_class_of("input_norm") == nullptr);
  WhatIfSpec w;
  CHECK_FALSE(w.any());
  w.kernel_speedup[static_cast<std::size_t>(OpClass::kCombine)] = 1.5;
  CHECK(w.any());
  CHECK(w.speedup(OpClass::kCombine) == 1.5);
  CHECK(w.speedup(OpClass::kDispatch) == 1.0);
}
