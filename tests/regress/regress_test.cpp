// `moesim regress` (issue 8): a prediction that moves by 5 % fails the guard with a readable table,
// --update rewrites the baselines and says what changed, and the guard passes again.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "cli/regress.hpp"
#include "core/error.hpp"

using namespace moesim;
namespace fs = std::filesystem;

TEST_CASE("tolerances read as percentages or fractions") {
  CHECK(cli::parse_tolerance("2%") == doctest::Approx(0.02));
  CHECK(cli::parse_tolerance("0.5") == doctest::Approx(0.5));
  CHECK_THROWS_AS((void)cli::parse_tolerance("two"), InputError);
  CHECK_THROWS_AS((void)cli::parse_tolerance("-1%"), InputError);
}

TEST_CASE("a 5 % drift fails regress with a table; --update fixes it") {
  const fs::path dir = test::binary_dir() / "regress-test" / "baselines";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir);
  const std::string moesim = test::moesim_binary();
  const std::string suite = " --suite '" + (test::source_dir() / "reports" / "regress").string() + "'";
  const std::string args = " regress --baselines '" + dir.string() + "'" + suite;

  // Empty folder: every point lacks a baseline.
  auto r = test::run_command(moesim + args, test::source_dir().string());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("NO BASELINE") != std::string::npos);
  r = test::run_command(moesim + args + " --update", test::source_dir().string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("new       mixtral-8x7b-h100-64.simulation") != std::string::npos);
  r = test::run_command(moesim + args, test::source_dir().string());
  CHECK_MESSAGE(r.exit_code == 0, r.out);

  // As if a cost constant had moved the prediction by 5 %: the baseline says 5 % less time.
  const fs::path file = dir / "mixtral-8x7b-h100-64.simulation.json";
  auto j = nlohmann::json::parse(test::slurp(file.string()));
  j["step_time_s"] = j["step_time_s"].get<double>() / 1.05;
  { std::ofstream(file) << j.dump(2); }
  r = test::run_command(moesim + args, test::source_dir().string());
  CHECK(r.exit_code == 1);
  MESSAGE(r.out);
  CHECK(r.out.find("mixtral-8x7b-h100-64.simulation") != std::string::npos);
  CHECK(r.out.find("+5.00%") != std::string::npos);
  CHECK(r.out.find("DRIFT > 2.00%") != std::string::npos);
  CHECK(r.out.find("1 of 14 points drifted") != std::string::npos);
  // ... which a looser tolerance accepts,
  CHECK(test::run_command(moesim + args + " --tolerance 6%", test::source_dir().string()).exit_code == 0);
  // and --update rewrites, naming the change.
  r = test::run_command(moesim + args + " --update", test::source_dir().string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("updated   mixtral-8x7b-h100-64.simulation") != std::string::npos);
  CHECK(r.out.find("1 of 14 baselines changed") != std::string::npos);
  CHECK(test::run_command(moesim + args, test::source_dir().string()).exit_code == 0);

  // A stale file (a point that left the suite) fails and --update removes it.
  fs::copy_file(file, dir / "gone.simulation.json");
  CHECK(test::run_command(moesim + args, test::source_dir().string()).exit_code == 1);
  r = test::run_command(moesim + args + " --update", test::source_dir().string());
  CHECK(r.out.find("removed   gone.simulation") != std::string::npos);
  CHECK(!fs::exists(dir / "gone.simulation.json"));
  fs::remove_all(dir.parent_path());
}
