#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../scratch_files.hpp"
#include "config/measured_run_loader.hpp"
#include "core/error.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {
const std::string kGood = R"({"schema": "moesim.validation-measured/1", "source": "unit test", "gpu": "h100-sxm",
  "gpus": 8, "layers": 2, "steps": 20, "warmup": 5, "step_time_s": 0.08,
  "phases_s": {"attention": 0.014, "mlp": 0.056}, "peak_memory_bytes": 1.2e10})";

std::string write(const std::string& name, const std::string& text) {
  return test::write_scratch("moesim_test_measured_run", name, text);
}

std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
  return test::replaced_once(text, from, to);
}
}  // namespace

TEST_CASE("measured run: the example file and a minimal one load; absent phases are zero") {
  const MeasuredRun ex = config::load_measured_run(std::string(MOESIM_SOURCE_DIR) +
                                                   "/tests/data/validation-measured-example.json");
  CHECK(ex.gpus == 8);
  CHECK(ex.layers == 2);
  CHECK(ex.phases_s.at("mlp") == doctest::Approx(0.056));
  const MeasuredRun m = config::load_measured_run(write("good.json", kGood));
  CHECK(m.step_time_s == doctest::Approx(0.08));
  CHECK(m.phases_s.at("ep_comm") == 0.0);
  CHECK(m.phases_s.size() == validation_phases().size());
}

TEST_CASE("measured run: malformed files are refused with the file, path, value and rule") {
  auto refused = [](const std::string& name, const std::string& text, const std::string& needle) {
    const std::string path = write(name, text);
    CHECK_THROWS_WITH_AS((void)config::load_measured_run(path), doctest::Contains(needle.c_str()), InputError);
    CHECK_THROWS_WITH_AS((void)config::load_measured_run(path), doctest::Contains(name.c_str()), InputError);
  };
  refused("schema.json", replaced(kGood, "moesim.validation-measured/1", "moesim.result/1"),
          "not a measured validation run");
  refused("unknown-key.json", replaced(kGood, "\"warmup\"", "\"warm_up\""), "unknown key 'warm_up'");
  refused("unknown-phase.json", replaced(kGood, "\"mlp\"", "\"moe\""), "/phases_s/moe");
  refused("negative.json", replaced(kGood, "\"step_time_s\": 0.08", "\"step_time_s\": -1"), "/step_time_s");
  refused("zero-gpus.json", replaced(kGood, "\"gpus\": 8", "\"gpus\": 0"), "/gpus");
  refused("no-phases.json", replaced(kGood, R"("phases_s": {"attention": 0.014, "mlp": 0.056}, )", ""), "/phases_s");
  refused("empty-source.json", replaced(kGood, "\"unit test\"", "\"\""), "/source");
}
