// The strict calibration-profile loader (config/profile_loader, docs/profile.md): the checked-in
// profiles load and are what their generator writes; every case of tests/invalid-profile is refused
// with its exact message, by the loader and through `moesim simulate`.
#include <doctest/doctest.h>

#include "../refusal.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "config/hw_loader.hpp"
#include "config/profile_loader.hpp"
#include "config/scenario_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace fs = std::filesystem;
using namespace moesim;

namespace {

std::string refusal(const std::string& path) { return test::refusal(config::load_profile_file, path); }

config::Json minimal() {
  return config::load_json_file((test::source_dir() / "tests/profile/data/h200-minimal.json").string());
}

std::string refusal_of(const config::Json& j) {
  try {
    (void)config::parse_profile(j, "inline.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the checked-in profiles load, each on its GPU, and cite their sources") {
  const std::vector<std::string> names = config::builtin_profile_names();
  for (const char* expected : {"a100-published", "b200-published", "gb200-published", "h100-published"}) {
    CHECK_MESSAGE(std::binary_search(names.begin(), names.end(), expected), expected);
  }
  for (const auto& name : names) {
    CAPTURE(name);
    const auto p = config::load_builtin_profile(name);
    REQUIRE(p);
    CHECK(p->name == name);
    CHECK(p->file == "calibrate/profiles/" + name + ".json");
    CHECK_NOTHROW((void)config::load_gpu_preset(p->provenance.gpu));
    if (p->provenance.source == hw::ProfileSource::kPublished) {
      // One citation per row plus the file they come from.
      CHECK(p->provenance.citations.size() == 1 + p->gemm.size() + p->collectives.size());
      CHECK(p->grouped_gemm.empty());
      CHECK(p->kernels.empty());
      CHECK(p->attention.empty());
    }
    CHECK_FALSE(p->gemm.empty());
  }
  CHECK(config::load_builtin_profile("no-such-profile") == nullptr);
  const auto h100 = config::load_builtin_profile("h100-published");
  CHECK(h100->provenance.gpu == "h100-sxm");
  CHECK(h100->collectives.size() == 24);  // the Azure ND H100 v5 all_reduce sweep, 1 KiB .. 8 GiB
  CHECK(h100->gemm.size() == 16);
}

TEST_CASE("the published profiles are what make_published_profiles.py writes") {
  const fs::path script = test::source_dir() / "calibrate/profiles/make_published_profiles.py";
  const auto probe = test::run_command("command -v python3", test::source_dir().string());
  if (probe.exit_code != 0) {
    MESSAGE("skipped: no python3 to run " << script.string());
    return;
  }
  const auto r = test::run_command("python3 '" + script.string() + "' --check", test::source_dir().string());
  CHECK_MESSAGE(r.exit_code == 0, r.err);
}

TEST_CASE("the test profiles load") {
  fs::current_path(test::source_dir());
  const auto minimal_profile = config::load_profile_file("tests/profile/data/h200-minimal.json");
  CHECK(minimal_profile->provenance.source == hw::ProfileSource::kMeasured);
  CHECK(minimal_profile->provenance.sm_count == 132);
  CHECK(minimal_profile->gemm.size() == 1);
  const auto synthetic = config::load_profile_file("tests/profile/data/h200-synthetic.json");
  CHECK(synthetic->gemm.size() == 18);
  CHECK(synthetic->grouped_gemm.size() == 6);
  CHECK(synthetic->kernels.size() == 14);
  CHECK(synthetic->attention.size() == 8);
  CHECK(synthetic->collectives.size() == 30);
  CHECK(synthetic->kernels.front().shape == std::vector<std::pair<std::string, std::int64_t>>{{"bytes", 1 << 20}});
}

TEST_CASE("every invalid profile is refused with its expected message") {
  fs::current_path(test::source_dir());
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator("tests/invalid-profile")) {
    if (entry.path().extension() == ".json") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  for (const char* required :
       {"truncated", "infinite-time", "wrong-schema", "missing-table", "negative-time", "zero-time", "negative-spread",
        "unknown-key-top", "unknown-key-row", "wrong-type", "zero-size", "absurd-bytes", "duplicate-gemm", "unknown-gpu",
        "unsupported-precision", "published-without-citations", "busbw-inconsistent", "empty-tokens",
        "missing-implementation", "unknown-implementation"}) {
    CAPTURE(required);
    CHECK(std::binary_search(cases.begin(), cases.end(), required));
  }
  const bool have_cli = fs::exists(test::moesim_binary());
  if (!have_cli) MESSAGE("skipped the CLI half: no " << test::moesim_binary());
  const fs::path scratch = test::binary_dir() / "profile-test-scenarios";
  fs::create_directories(scratch);
  for (const auto& name : cases) {
    CAPTURE(name);
    const std::string json = "tests/invalid-profile/" + name + ".json";
    const std::string expect = "tests/invalid-profile/" + name + ".expect";
    REQUIRE_MESSAGE(fs::exists(expect), "missing " << expect);
    const std::string expected = test::first_line(read_text_file(expect));
    CHECK(expected.starts_with(json + ": "));
    CHECK(refusal(json) == expected);
    if (!have_cli) continue;
    // A scenario naming the profile: `moesim simulate` exits 2 with the same message.
    const fs::path scenario = scratch / (name + ".json");
    std::ofstream(scenario) << R"({"model": "mixtral-8x7b", "system": {"preset": "hgx-h200", "gpus": 8, "profile": ")"
                            << (test::source_dir() / json).string()
                            << R"("}, "training": {"seq_length": 4096, "global_batch_size": 8}, "parallel": {"ep": 8}})";
    const auto r = test::run_command(test::moesim_binary() + " simulate '" + scenario.string() + "' --fidelity estimate",
                                     test::source_dir().string());
    CHECK(r.exit_code == 2);
    // The CLI names the profile by the absolute path the scenario gives.
    CHECK(test::first_line(r.err) ==
          "moesim: error: " + (test::source_dir() / json).string() + expected.substr(json.size()));
  }
}

TEST_CASE("row limits refuse absurd tables before building them") {
  config::Json j = minimal();
  j["grouped_gemm"][0]["tokens"] = config::Json(std::vector<std::int64_t>(65'537, 1));
  CHECK(refusal_of(j) ==
        "inline.json: at /grouped_gemm/0/tokens: value 65537 entries: one token count per expert; allowed: 1 to 65536 "
        "entries");
  j = minimal();
  j["kernels"][0]["shape"]["tokens"] = -1;
  CHECK(refusal_of(j) == "inline.json: at /kernels/0/shape/tokens: value -1: out of range; allowed: integers from 1 to "
                         "1099511627776");
  j = minimal();
  j["provenance"]["citations"] = config::Json::array({""});
  CHECK(refusal_of(j) == "inline.json: at /provenance/citations/0: value \"\": a citation must not be empty");
}

TEST_CASE("a published profile may leave out what a publication cannot know") {
  config::Json j = minimal();
  auto& p = j["provenance"];
  p["source"] = "published";
  p["citations"] = config::Json::array({"somewhere, Table 1"});
  p["date"] = "unknown";
  for (const char* key : {"sm_count", "sm_clock_mhz", "memory_clock_mhz", "gpus_visible"}) p.erase(key);
  for (const char* key : {"algorithm", "best_algorithm_us", "spread_us", "repeats"}) j["gemm"][0].erase(key);
  const auto profile = config::parse_profile(j, "inline.json");
  CHECK_FALSE(profile->provenance.sm_count.has_value());
  CHECK(profile->gemm[0].time.repeats == 1);
  CHECK(profile->gemm[0].time.spread_us == 0);
  CHECK(profile->gemm[0].algorithm == "unknown");
  // A measured profile may not.
  p["source"] = "measured";
  CHECK(refusal_of(j) ==
        "inline.json: at /provenance/sm_count: required field is missing; allowed: integers from 1 to 1000000");
}

TEST_CASE("a scenario names a profile by file (relative to its folder) or by checked-in name, on its own GPU") {
  const auto profile_of = [](const std::string& written, const std::string& preset) {
    const config::Json j{{"model", "mixtral-8x7b"},
                         {"system", {{"preset", preset}, {"gpus", 8}, {"profile", written}}},
                         {"training", {{"seq_length", 4096}, {"global_batch_size", 8}}},
                         {"parallel", {{"ep", 8}}}};
    return config::parse_scenario(j, "s.json", test::source_dir() / "tests/profile").calibration;
  };
  const auto by_file = profile_of("data/h200-synthetic.json", "hgx-h200");
  REQUIRE(by_file);
  CHECK(by_file->name == "data/h200-synthetic.json");
  CHECK(by_file->file == (test::source_dir() / "tests/profile/data/h200-synthetic.json").string());
  const auto by_name = profile_of("h100-published", "hgx-h100");
  REQUIRE(by_name);
  CHECK(by_name->file == "calibrate/profiles/h100-published.json");
  const auto absent = [] {
    const config::Json j{{"model", "mixtral-8x7b"},
                         {"system", {{"preset", "hgx-h100"}, {"gpus", 8}}},
                         {"training", {{"seq_length", 4096}, {"global_batch_size", 8}}},
                         {"parallel", {{"ep", 8}}}};
    return config::parse_scenario(j, "s.json", ".").calibration;
  }();
  CHECK_FALSE(absent);
  try {
    (void)profile_of("data/h200-synthetic.json", "hgx-h100");
    FAIL("an H200 profile on an H100 cluster must be refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "s.json: at /system/profile: value \"data/h200-synthetic.json\": profile " +
              (test::source_dir() / "tests/profile/data/h200-synthetic.json").string() +
              " was made on GPU h200-sxm but the scenario's system uses h100-sxm; a profile describes only its own "
              "GPU; allowed: h100-published");
  }
}
