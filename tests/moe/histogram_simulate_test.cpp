// End to end: `moesim simulate tests/data/small-moe-histogram.json` routes every MoE layer by the
// shipped CSV, and the result's routing.mean_imbalance is what the CSV implies, computed here by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../run_command.hpp"
#include "../test_paths.hpp"

namespace fs = std::filesystem;
using namespace moesim;

namespace {

/// tokens[layer][expert] from a `layer,expert,tokens` CSV with # comments, read independently of
/// the loader under test.
std::map<int, std::map<int, double>> read_csv(const fs::path& path) {
  std::ifstream in(path);
  std::map<int, std::map<int, double>> out;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    int layer = 0, expert = 0;
    double tokens = 0;
    fields >> layer >> expert >> tokens;
    out[layer][expert] = tokens;
  }
  return out;
}

/// max / mean of the EP ranks' shares, experts placed contiguously.
double rank_imbalance(const std::map<int, double>& experts, int ep) {
  std::vector<double> ranks(static_cast<std::size_t>(ep), 0.0);
  const auto per_rank = static_cast<int>(experts.size()) / ep;
  double total = 0;
  for (const auto& [e, t] : experts) {
    ranks[static_cast<std::size_t>(e / per_rank)] += t;
    total += t;
  }
  return *std::max_element(ranks.begin(), ranks.end()) / (total / ep);
}

}  // namespace

TEST_CASE("a measured histogram runs end to end and sets the routing imbalance it implies") {
  const fs::path root = test::source_dir();
  const auto hist = read_csv(root / "tests/data/small-moe-routing.csv");
  REQUIRE(hist.size() == 4);
  for (const auto& [layer, experts] : hist) REQUIRE(experts.size() == 16);

  const std::string out = (test::binary_dir() / "histogram-simulate-test.json").string();
  fs::remove(out);
  const auto r = test::run_command(
      test::moesim_binary() + " simulate tests/data/small-moe-histogram.json --json '" + out + "'", root.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  fs::remove(out);

  // The scenario: layers 1-4 are MoE (first_k_dense 1) and read histogram layers 0-3; the MTP
  // layer reuses histogram layer 3. EP 4 over 16 experts; shares are exact (no noise), the same
  // for every micro-batch, and far below the 1/topk cap, so each (layer, micro-batch) draw is the
  // layer's per-rank max/mean and the mean over draws weighs layer 3 twice.
  const int ep = 4;
  double expected = 0;
  for (int layer : {0, 1, 2, 3, 3}) expected += rank_imbalance(hist.at(layer), ep) / 5.0;
  CHECK(expected > 1.2);  // the shipped histogram is visibly skewed
  const auto& routing = j.at("routing");
  CHECK(routing.at("mean_imbalance").get<double>() == doctest::Approx(expected).epsilon(1e-9).scale(0));
  CHECK(routing.at("max_imbalance").get<double>() ==
        doctest::Approx(rank_imbalance(hist.at(3), ep)).epsilon(1e-9).scale(0));
  CHECK(routing.at("drop_rate").get<double>() == 0.0);
  CHECK(j.at("breakdown").at("moe_imbalance").get<double>() == doctest::Approx(expected).epsilon(1e-9).scale(0));
  CHECK(j.at("scenario").at("moe").at("routing").at("file") == "small-moe-routing.csv");
  CHECK(j.at("simulation").at("ranks_simulated").get<int>() == ep);  // every EP rank of the one stage
}
