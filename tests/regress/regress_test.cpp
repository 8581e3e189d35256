// The regress module (the suite, its points, the comparison with baselines) and `moesim regress`
// (issue 8): a prediction that moves by 5 % fails the guard with a readable table, --update rewrites
// the baselines and says what changed, and the guard passes again.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "core/error.hpp"
#include "regress/drift.hpp"
#include "regress/suite.hpp"

using namespace moesim;
namespace fs = std::filesystem;

TEST_CASE("tolerances read as percentages or fractions") {
  CHECK(regress::parse_tolerance("2%") == doctest::Approx(0.02));
  CHECK(regress::parse_tolerance("0.5") == doctest::Approx(0.5));
  CHECK_THROWS_AS((void)regress::parse_tolerance("two"), InputError);
  CHECK_THROWS_AS((void)regress::parse_tolerance("-1%"), InputError);
}

namespace {
RegressionPoint point(const std::string& id, double step, const std::string& scenario = "s") {
  RegressionPoint p;
  p.id = id;
  p.scenario = scenario;
  p.fidelity = "simulation";
  p.step_time_s = step;
  p.tokens_per_s = 1000 / step;
  p.peak_bytes = 1e9;
  return p;
}
}  // namespace

TEST_CASE("the suite: 14 points, ids from the scenario's stem and the fidelity, all distinct") {
  const auto& suite = regress::regression_suite();
  REQUIRE(suite.size() == 14);
  CHECK(regress::point_id(suite.front()) == "mixtral-8x7b-h100-64.simulation");
  CHECK(regress::point_id({"llama-3-8b-h100-16.json", "estimate"}) == "llama-3-8b-h100-16.estimate");
  std::set<std::string> ids;
  for (const auto& e : suite) ids.insert(regress::point_id(e));
  CHECK(ids.size() == suite.size());
}

TEST_CASE("a suite point is the prediction of its scenario at its fidelity") {
  const auto p = regress::run_point({"mixtral-8x7b-h100-64", "estimate"}, test::source_dir() / "reports" / "regress");
  CHECK(p.id == "mixtral-8x7b-h100-64.estimate");
  CHECK(p.scenario == "mixtral-8x7b-h100-64");
  CHECK(p.fidelity == "estimate");
  CHECK(p.step_time_s > 0);
  CHECK(p.tokens_per_s > 0);
  CHECK(p.peak_bytes > 0);
  CHECK_THROWS_AS((void)regress::run_point({"nowhere.json", "estimate"}, test::source_dir() / "reports" / "regress"), InputError);
}

TEST_CASE("compare pairs points by id: suite order first, then baselines that left the suite") {
  const std::vector<RegressionPoint> baselines{point("gone.simulation", 1.0), point("a.simulation", 1.0),
                                               point("b.simulation", 2.0), point("c.simulation", 1.0, "old")};
  const std::vector<RegressionPoint> now{point("b.simulation", 2.1), point("a.simulation", 1.01), point("new.simulation", 3.0),
                                         point("c.simulation", 1.0, "new")};
  const auto d = regress::compare(baselines, now, 0.02);
  REQUIRE(d.size() == 5);
  CHECK(d[0].id == "b.simulation");
  CHECK(d[0].step == doctest::Approx(0.05));
  CHECK(d[0].tokens == doctest::Approx(1 / 1.05 - 1));
  CHECK_FALSE(d[0].ok);
  CHECK(d[1].id == "a.simulation");
  CHECK(d[1].ok);
  CHECK(d[2].id == "new.simulation");
  CHECK_FALSE(d[2].baseline);
  CHECK_FALSE(d[2].ok);
  CHECK(d[3].id == "c.simulation");
  CHECK(d[3].step == 0.0);
  CHECK_FALSE(d[3].ok);  // same figures, another scenario
  CHECK_FALSE(regress::unchanged(d[3]));
  CHECK(d[4].id == "gone.simulation");
  CHECK_FALSE(d[4].now);
  CHECK(regress::unchanged(regress::compare({point("x", 1.0)}, {point("x", 1.0)}, 0.0).front()));

  const std::string table = regress::drift_table(d, 0.02);
  CHECK(table.find("+5.00%") != std::string::npos);
  CHECK(table.find("DRIFT > 2.00%") != std::string::npos);
  CHECK(table.find("NO BASELINE") != std::string::npos);
  CHECK(table.find("SCENARIO CHANGED") != std::string::npos);
  CHECK(table.find("NOT IN SUITE") != std::string::npos);
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
