// The measured routing histogram reader (config/routing_histogram): both formats, the mapping from
// model layers to MoE layers, and one exact message per rule it enforces.
#include "config/routing_histogram.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "config/json_reader.hpp"
#include "config/scenario_loader.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;
using namespace moesim;
using config::HistogramFormat;
using config::Json;

namespace {

/// 5 layers, the middle and last ones dense → MoE layers are model layers 1, 2, 4; 4 experts, top-2.
model::ModelSpec small_model() {
  model::ModelSpec m;
  m.num_layers = 5;
  m.num_moe_experts = 4;
  m.moe_router_topk = 2;
  m.moe_layer_pattern = {false, true, true, false, true};
  return m;
}

RoutingHistogram parse(const std::string& text, HistogramFormat f = HistogramFormat::kCsv) {
  return config::parse_routing_histogram(text, f, "h.csv", small_model());
}

std::string refusal(const std::string& text, HistogramFormat f = HistogramFormat::kCsv) {
  try {
    (void)parse(text, f);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// A complete CSV body for the small model: counts 10·layer + expert + 1.
std::string rows(int layers = 3, int experts = 4, const std::string& prefix = "") {
  std::string out;
  for (int l = 0; l < layers; ++l) {
    for (int e = 0; e < experts; ++e)
      out += prefix + std::to_string(l) + "," + std::to_string(e) + "," + std::to_string(10 * l + e + 1) + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("a CSV histogram loads: any row order, comments, blank lines, CRLF and decimals") {
  const RoutingHistogram h =
      parse("# measured on 2026-12-01\r\nlayer,expert,tokens\r\n\r\n" + rows() + "# trailing comment\n");
  REQUIRE(h.steps() == 1);
  REQUIRE(h.moe_layers() == 3);
  CHECK(h.experts == 4);
  CHECK(h.tokens[0][2][3] == 24.0);
  CHECK(h.file == "h.csv");
  // Columns in another order, rows shuffled, decimal counts.
  const RoutingHistogram g = parse(
      "tokens, expert ,layer\n2.5,1,0\n1,0,0\n3,2,0\n4,3,0\n"
      "1,0,1\n1,1,1\n1,2,1\n1,3,1\n"
      "0,0,2\n0,1,2\n0,2,2\n7.25,3,2\n");
  CHECK(g.tokens[0][0][1] == 2.5);
  CHECK(g.tokens[0][2][3] == 7.25);
}

TEST_CASE("model layers map to histogram layers by the layer pattern; MTP layers reuse the last MoE layer") {
  const RoutingHistogram h = parse("layer,expert,tokens\n" + rows());
  CHECK(h.moe_layer_of == std::vector<std::int64_t>{-1, 0, 1, -1, 2});
  CHECK(h.moe_layer(1) == 0);
  CHECK(h.moe_layer(2) == 1);
  CHECK(h.moe_layer(4) == 2);
  CHECK(h.moe_layer(5) == 2);  // the first MTP layer
  CHECK(h.moe_layer(6) == 2);
  CHECK_THROWS_AS((void)h.moe_layer(3), InternalError);  // dense: a caller bug, not an input error
  CHECK_THROWS_AS((void)h.moe_layer(-1), InternalError);
}

TEST_CASE("a step column gives several measurements, ordered by step number") {
  const RoutingHistogram h = parse("step,layer,expert,tokens\n" + rows(3, 4, "100,") + rows(3, 4, "7,"));
  REQUIRE(h.steps() == 2);
  CHECK(h.tokens[0][1][2] == 13.0);
  CHECK(h.tokens[1][1][2] == 13.0);
  const RoutingHistogram g = parse("step,layer,expert,tokens\n" + rows(3, 4, "9,") +
                                   "5,0,0,100\n5,0,1,0\n5,0,2,0\n5,0,3,0\n5,1,0,1\n5,1,1,1\n5,1,2,1\n5,1,3,1\n"
                                   "5,2,0,1\n5,2,1,1\n5,2,2,1\n5,2,3,1\n");
  CHECK(g.tokens[0][0][0] == 100.0);  // step 5 comes before step 9
  CHECK(g.tokens[1][0][0] == 1.0);
}

TEST_CASE("CSV histograms are refused with the line, the value, the rule and the allowed values") {
  const std::string header = "layer,expert,tokens\n";
  CHECK(refusal("") ==
        "h.csv: at /: empty histogram file: expected a header 'layer,expert,tokens' and one row per (layer, expert)");
  CHECK(refusal("# only a comment\n\n") ==
        "h.csv: at /: empty histogram file: expected a header 'layer,expert,tokens' and one row per (layer, expert)");
  CHECK(refusal(header) ==
        "h.csv: at line 1: the header is followed by no rows; allowed: one row per (layer, expert): 3 x 4");
  CHECK(refusal("layer,expert,count\n0,0,1\n") ==
        "h.csv: at line 1, column 3: value \"count\": unknown column in the header; allowed: step, layer, expert, "
        "tokens");
  CHECK(refusal("layer,layer,tokens\n") ==
        "h.csv: at line 1, column 2: value \"layer\": column listed twice in the header; allowed: step, layer, expert, "
        "tokens");
  CHECK(refusal("layer,tokens\n0,1\n") ==
        "h.csv: at line 1: value \"layer,tokens\": the header lacks the 'expert' column; "
        "allowed: layer,expert,tokens or step,layer,expert,tokens");
  CHECK(refusal(header + "0,0\n") ==
        "h.csv: at line 2: value \"0,0\": expected 3 comma-separated fields, as in the header, got 2");
  CHECK(refusal(header + "0,0,many\n") ==
        "h.csv: at line 2, column tokens: value \"many\": expected a number (tokens routed to this expert); allowed: "
        "numbers >= 0");
  CHECK(refusal(header + "0,0,nan\n") ==
        "h.csv: at line 2, column tokens: value \"nan\": expected a number (tokens routed to this expert); allowed: "
        "numbers >= 0");
  CHECK(refusal(header + "0,0,-3\n") ==
        "h.csv: at line 2, column tokens: value -3: negative token count; allowed: numbers >= 0");
  CHECK(refusal(header + "0,0,1e16\n") ==
        "h.csv: at line 2, column tokens: value 1e16: absurd token count; allowed: numbers >= 0 and <= 1e+15");
  CHECK(refusal(header + "0,1.5,3\n") ==
        "h.csv: at line 2, column expert: value 1.5: expected a non-negative integer (expert index)");
  CHECK(refusal(header + "-1,0,3\n") ==
        "h.csv: at line 2, column layer: value -1: expected a non-negative integer (MoE layer index)");
  CHECK(refusal(header + "3,0,3\n") ==
        "h.csv: at line 2, column layer: value 3: MoE layer index beyond the model's 3 MoE layers "
        "(0 = the first MoE layer); allowed: 0-2");
  CHECK(refusal(header + "0,4,3\n") ==
        "h.csv: at line 2, column expert: value 4: expert index beyond the model's 4 experts (num_moe_experts); "
        "allowed: 0-3");
  CHECK(refusal(header + rows(3, 3)) ==
        "h.csv: at column expert: value 3: the histogram has 3 experts per layer but the model has num_moe_experts = "
        "4; allowed: 4");
  CHECK(refusal(header + rows(2, 4)) ==
        "h.csv: at column layer: value 2: the histogram has 2 MoE layers but the model has 3 "
        "(one entry per MoE layer, in model order); allowed: 3");
  CHECK(refusal(header + rows() + "1,2,5\n") == "h.csv: at line 14: layer 1, expert 2 appears twice (first at line 8)");
  std::string missing = rows();
  missing.erase(missing.find("1,2,13\n"), 7);
  CHECK(
      refusal(header + missing) ==
      "h.csv: at layer 1, expert 2: no row for this (layer, expert): every expert of every MoE layer must appear once");
  CHECK(refusal("step,layer,expert,tokens\n" + rows(3, 4, "0,") + "1,0,0,5\n") ==
        "h.csv: at step 1, layer 0, expert 1: no row for this (layer, expert): every expert of every MoE layer must "
        "appear "
        "once per step");
  std::string zero = rows();
  for (const char* row : {"0,0,1\n", "0,1,2\n", "0,2,3\n", "0,3,4\n"})
    zero.replace(zero.find(row), 6, std::string(row, 4) + "0\n");
  CHECK(refusal(header + zero) ==
        "h.csv: at layer 0: value total 0: every token count of this layer is 0, so its expert shares are undefined; "
        "allowed: a layer with at least one token");
}

TEST_CASE("a JSON histogram loads as one measurement or a list of steps") {
  const std::string layers = R"([[1, 2, 3, 4], [5, 6, 7, 8.5], [0, 0, 0, 1]])";
  const RoutingHistogram h = parse(
      R"({"schema": "moesim.routing-histogram/1", "experts": 4, "layers": )" + layers + "}", HistogramFormat::kJson);
  REQUIRE(h.steps() == 1);
  CHECK(h.tokens[0][1][3] == 8.5);
  CHECK(h.moe_layer_of == std::vector<std::int64_t>{-1, 0, 1, -1, 2});
  const RoutingHistogram g =
      parse(R"({"schema": "moesim.routing-histogram/1", "experts": 4, "steps": [)" + layers + ", " + layers + "]}",
            HistogramFormat::kJson);
  CHECK(g.steps() == 2);
}

TEST_CASE("JSON histograms are refused with the JSON path, the value, the rule and the allowed values") {
  auto doc = [](const std::string& body) {
    return R"({"schema": "moesim.routing-histogram/1", "experts": 4, )" + body + "}";
  };
  const auto json = HistogramFormat::kJson;
  CHECK(refusal(R"({"experts": 4, "layers": []})", json) ==
        "h.csv: at /schema: required field is missing; allowed: moesim.routing-histogram/1");
  CHECK(refusal(R"({"schema": "x", "experts": 4, "layers": []})", json) ==
        "h.csv: at /schema: value \"x\": unsupported routing histogram schema; allowed: moesim.routing-histogram/1");
  CHECK(refusal(R"({"schema": "moesim.routing-histogram/1", "experts": 8, "layers": []})", json) ==
        "h.csv: at /experts: value 8: the histogram has 8 experts per layer but the model has num_moe_experts = 4; "
        "allowed: 4");
  CHECK(refusal(doc(R"("layers": [[1,1,1,1]], "bins": 3)"), json).starts_with("h.csv: at /bins: "));
  CHECK(refusal(doc(R"("layers": [[1,1,1,1],[1,1,1,1]])"), json) ==
        "h.csv: at /layers: value 2 layers: the histogram has 2 MoE layers but the model has 3 (one entry per MoE "
        "layer, in "
        "model order); allowed: 3");
  CHECK(refusal(doc(R"("layers": [[1,1,1,1],[1,1,1],[1,1,1,1]])"), json) ==
        "h.csv: at /layers/1: value 3 counts: the histogram has 3 experts per layer but the model has num_moe_experts "
        "= 4; "
        "allowed: 4");
  CHECK(refusal(doc(R"("layers": [[1,1,1,1],[1,1,-2,1],[1,1,1,1]])"), json) ==
        "h.csv: at /layers/1/2: value -2: negative token count; allowed: numbers >= 0");
  CHECK(refusal(doc(R"("layers": [[1,1,1,1],[1,"1",1,1],[1,1,1,1]])"), json) ==
        "h.csv: at /layers/1/1: value \"1\": expected a number, got a string; allowed: numbers >= 0");
  CHECK(refusal(doc(R"("layers": [[1,1,1,1],[0,0,0,0],[1,1,1,1]])"), json) ==
        "h.csv: at /layers/1: value total 0: every token count of this layer is 0, so its expert shares are undefined; "
        "allowed: a layer with at least one token");
  CHECK(refusal(doc(R"("steps": [[[1,1,1,1],[1,1,1,1],[1,1,1,1]], [[1,1,1,1],[1,1,1,1]]])"), json) ==
        "h.csv: at /steps/1: value 2 layers: the histogram has 2 MoE layers but the model has 3 (one entry per MoE "
        "layer, in "
        "model order); allowed: 3");
  CHECK(refusal(doc(R"("steps": [])"), json) ==
        "h.csv: at /steps: value []: expected a non-empty list of steps, each a list of MoE layers");
  CHECK(
      refusal(doc(R"("layers": [], "steps": [])"), json) ==
      "h.csv: at /steps: give either \"layers\" (one measurement) or \"steps\" (a list of them), exactly one; allowed: "
      "layers, steps");
  CHECK(refusal(R"({"schema": )", json).starts_with("h.csv: at /: malformed JSON"));
}

TEST_CASE("the scenario loader reads the histogram beside the scenario and checks it against the model") {
  const fs::path dir = fs::temp_directory_path() / "moesim_test_routing_histogram";
  fs::create_directories(dir / "data");
  auto write = [&](const std::string& name, const std::string& text) {
    std::FILE* f = std::fopen((dir / name).string().c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  // The loader's small MoE: 8 layers, every one MoE, 8 experts.
  std::string csv = "layer,expert,tokens\n";
  for (int l = 0; l < 8; ++l) {
    for (int e = 0; e < 8; ++e) csv += std::to_string(l) + "," + std::to_string(e) + "," + std::to_string(e + 1) + "\n";
  }
  write("data/hist.csv", csv);
  write("data/hist.txt", csv);
  Json j = Json::parse(R"({
    "model": {"num_layers": 8, "hidden_size": 1024, "num_attention_heads": 16, "num_query_groups": 4,
              "ffn_hidden_size": 4096, "vocab_size": 32000, "num_moe_experts": 8, "moe_router_topk": 2,
              "moe_ffn_hidden_size": 1024},
    "system": {"preset": "hgx-h100", "gpus": 16},
    "training": {"seq_length": 4096, "global_batch_size": 64},
    "moe": {"routing": {"distribution": "histogram", "file": "data/hist.csv"}}
  })");
  auto refused = [&](const Json& scenario) -> std::string {
    try {
      (void)config::parse_scenario(scenario, "s.json", dir);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const Scenario s = config::parse_scenario(j, "s.json", dir);
  REQUIRE(s.moe.routing.histogram != nullptr);
  CHECK(s.moe.routing.histogram_file == "data/hist.csv");
  CHECK(s.moe.routing.histogram->file == (dir / "data/hist.csv").string());
  CHECK(s.moe.routing.histogram->tokens[0][7][7] == 8.0);

  j["moe"]["routing"]["file"] = "data/hist.txt";
  CHECK(refused(j) ==
        "s.json: at /moe/routing/file: value \"data/hist.txt\": the file name must say the histogram's "
        "format; allowed: names ending in .csv or .json");
  j["moe"]["routing"]["file"] = "data/hist.csv";
  j["moe"]["routing"]["per_layer_variation"] = true;
  CHECK(refused(j) ==
        "s.json: at /moe/routing/per_layer_variation: value true: 'per_layer_variation' applies to drawn "
        "popularities; a histogram gives each layer and step its measured shares; allowed: distribution, "
        "file, device_limited_nodes");
  j["moe"]["routing"].erase("per_layer_variation");
  j["model"]["num_moe_experts"] = 16;
  CHECK(refused(j) == (dir / "data/hist.csv").string() +
                          ": at column expert: value 8: the histogram has 8 experts per layer but the model has "
                          "num_moe_experts = 16; allowed: 16");
  j["model"]["num_moe_experts"] = 8;
  j["model"]["moe_layer_freq"] = 2;  // 4 MoE layers: the file's layer 4 is beyond them
  CHECK(refused(j).starts_with((dir / "data/hist.csv").string() +
                               ": at line 34, column layer: value 4: MoE layer index "
                               "beyond the model's 4 MoE layers"));
  fs::remove_all(dir);
}
