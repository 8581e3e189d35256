// The data-driven table of invalid scenarios: every tests/invalid/<case>.json must be refused with
// exactly the one-line message in tests/invalid/<case>.expect (see tests/invalid/README.md).
#include <doctest/doctest.h>

#include "../refusal.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../test_paths.hpp"
#include "config/scenario_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace fs = std::filesystem;
using namespace moesim;

namespace {

std::string refusal(const std::string& path) { return test::refusal(config::load_scenario_file, path); }
using test::first_line;

}  // namespace

TEST_CASE("every invalid scenario is refused with its expected message") {
  // Messages name the file as given, relative to the repository root, as the CLI test runs them.
  fs::current_path(moesim::test::source_dir());
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator("tests/invalid")) {
    if (entry.path().extension() == ".json") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  // The table may grow; these are the rules the contract promises to enforce.
  for (const char* required :
       {"malformed-json", "unknown-key-top", "unknown-key-nested", "wrong-type", "negative-size", "zero-size",
        "tp-not-dividing-heads", "ep-not-dividing-experts", "gpus-not-divisible", "global-batch-not-divisible",
        "nvfp4-on-h100", "unknown-model-preset", "unknown-system-preset", "missing-hf-config", "dp-disagrees",
        "absurd-gpus", "schema-mismatch", "topology-missing-file", "topology-dangling-link", "topology-with-preset",
        "topology-gpus-disagree", "profile-gpu-mismatch", "profile-missing", "profile-negative-time", "duplicate-key",
        "deep-nesting"}) {
    CAPTURE(required);
    CHECK(std::binary_search(cases.begin(), cases.end(), required));
  }
  for (const auto& name : cases) {
    CAPTURE(name);
    const std::string json = "tests/invalid/" + name + ".json";
    const std::string expect = "tests/invalid/" + name + ".expect";
    REQUIRE_MESSAGE(fs::exists(expect), "missing " << expect);
    const std::string expected = first_line(read_text_file(expect));
    // The scenario file, or the file it names when that one is at fault (a missing hf_config, a broken
    // topology file, which topology-dangling-link borrows from tests/invalid-topology/, a broken
    // calibration profile from tests/invalid-profile/).
    CHECK((expected.starts_with("tests/invalid/") || expected.starts_with("tests/invalid-topology/") ||
           expected.starts_with("tests/invalid-profile/")));
    CHECK(refusal(json) == expected);
  }
}

TEST_CASE("a missing scenario file is an error naming the file") {
  fs::current_path(moesim::test::source_dir());
  CHECK(refusal("tests/invalid/no-such-scenario.json") == "tests/invalid/no-such-scenario.json: at /: file not found");
  CHECK(refusal("tests/invalid") == "tests/invalid: at /: is a directory, expected a file");
}
