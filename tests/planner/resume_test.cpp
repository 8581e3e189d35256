// A search stopped early and resumed from its checkpoint ends identical to one that never stopped
// (issue 11): the logic behind `moesim plan --shard i/N --resume`, without processes or signals.
#include <doctest/doctest.h>

#include "config/json_reader.hpp"
#include "config/plan_loader.hpp"
#include "core/error.hpp"
#include "planner/search.hpp"
#include "planner/search_space.hpp"
#include "report/plan_json.hpp"

using namespace moesim;
using config::Json;

namespace {

PlanRequest mixtral_request() {
  PlanRequest r;
  r.base = config::plan_question_from_flags("mixtral-8x7b", "hgx-h100", 64, 4096, 256).scenario;
  r.space.micro_batch_size = {1, 2};
  planner::complete_space(r);
  return r;
}

}  // namespace

TEST_CASE("a search stopped after some blocks and resumed from its checkpoint equals the uninterrupted search") {
  const PlanRequest req = mixtral_request();
  planner::SearchOptions plain;
  plain.threads = 2;
  const SearchEvaluation full = planner::search(req, plain);
  const std::string expected = report::search_shard_to_json_text(req, full);
  REQUIRE(full.considered > 2000);  // several blocks, so that a stop lands mid-way

  // Stop at the third poll; the checkpoint is saved then and read back as `moesim plan --resume` does.
  int polls = 0;
  std::string saved;
  planner::SearchOptions first = plain;
  first.checkpoint_every_s = 1e9;  // only the save on stop
  first.stop_requested = [&] { return ++polls >= 3; };
  first.checkpoint = [&](const SearchEvaluation& so_far, std::int64_t total) {
    saved = report::search_checkpoint_to_json_text(req, so_far, so_far.considered, total);
  };
  const planner::SearchRun stopped = planner::run_search(req, first);
  CHECK_FALSE(stopped.complete());
  CHECK(stopped.evaluation.considered > 0);
  CHECK(stopped.evaluation.considered < stopped.total);
  REQUIRE_FALSE(saved.empty());
  const config::PlanCheckpoint cp = config::parse_plan_checkpoint(saved, "test.checkpoint");
  CHECK(cp.done == stopped.evaluation.considered);
  CHECK(cp.total == full.considered);
  CHECK(report::plan_request_to_json_text(cp.request) == report::plan_request_to_json_text(req));

  planner::SearchOptions second = plain;
  second.threads = 1;  // another thread count: the result must not depend on it either
  second.resume = &cp.evaluation;
  const planner::SearchRun resumed = planner::run_search(req, second);
  CHECK(resumed.complete());
  CHECK(report::search_shard_to_json_text(req, resumed.evaluation) == expected);
}

TEST_CASE("periodic checkpoints grow in enumeration order and one past the middle resumes to the same result") {
  const PlanRequest req = mixtral_request();
  planner::SearchOptions o;
  o.threads = 2;
  o.checkpoint_every_s = 0;  // after every block
  std::int64_t checkpoints = 0, last_done = 0;
  std::string middle;  // the first checkpoint at or past half the candidates, as written to disk
  o.checkpoint = [&](const SearchEvaluation& so_far, std::int64_t total) {
    ++checkpoints;
    CHECK(so_far.considered > last_done);
    last_done = so_far.considered;
    // Only this one is serialised: writing every block's checkpoint made the test quadratic.
    if (middle.empty() && 2 * so_far.considered >= total && so_far.considered < total) {
      middle = report::search_checkpoint_to_json_text(req, so_far, so_far.considered, total);
    }
  };
  const SearchEvaluation full = planner::run_search(req, o).evaluation;
  REQUIRE(checkpoints >= 2);
  REQUIRE_FALSE(middle.empty());
  const std::string expected = report::search_shard_to_json_text(req, full);
  const config::PlanCheckpoint as_read = config::parse_plan_checkpoint(middle, "middle.checkpoint");
  CHECK(as_read.evaluation.considered < full.considered);
  planner::SearchOptions r;
  r.threads = 2;
  r.resume = &as_read.evaluation;
  CHECK(report::search_shard_to_json_text(req, planner::run_search(req, r).evaluation) == expected);
}

TEST_CASE("a checkpoint of another shard, or covering more candidates than the shard has, is refused") {
  const PlanRequest req = mixtral_request();
  SearchEvaluation other;
  other.shard = 1;
  other.shards = 2;
  planner::SearchOptions o;
  o.resume = &other;
  CHECK_THROWS_WITH_AS((void)planner::run_search(req, o),
                       "at /search/shard: value 1/2: the checkpoint is of another shard; allowed: 0/1", InputError);
  SearchEvaluation too_far;
  too_far.considered = 1'000'000'000;
  o.resume = &too_far;
  CHECK_THROWS_AS((void)planner::run_search(req, o), InputError);
}

// Every rule of the checkpoint loader (config/plan_loader.cpp) refuses a damaged checkpoint with its
// exact message: the file, the JSON path, the value, the rule and what is allowed.
TEST_CASE("a damaged checkpoint is refused with the exact message") {
  PlanRequest req;
  req.base = config::plan_question_from_flags("mixtral-8x7b", "hgx-h100", 64, 4096, 256).scenario;
  req.space.micro_batch_size = {1};
  req.space.tp = {1, 2};
  planner::complete_space(req);
  planner::SearchOptions so;
  so.threads = 1;
  const SearchEvaluation e = planner::search(req, so);
  REQUIRE(e.considered > 2);
  const Json good = Json::parse(report::search_checkpoint_to_json_text(req, e, e.considered, e.considered + 10));
  CHECK(config::parse_plan_checkpoint(good.dump(), "c.checkpoint").done == e.considered);

  auto refused = [](const Json& doc) {
    try {
      (void)config::parse_plan_checkpoint(doc.dump(), "c.checkpoint");
    } catch (const InputError& err) {
      return std::string(err.what());
    }
    return std::string("accepted");
  };
  const std::string considered = std::to_string(e.considered);

  Json no_progress = good;
  no_progress.erase("progress");
  CHECK(refused(no_progress) ==
        "c.checkpoint: at /progress: required field is missing; allowed: {\"done\": N, \"total\": M}");

  Json past_total = good;
  past_total["progress"]["done"] = e.considered + 11;
  CHECK(refused(past_total) == "c.checkpoint: at /progress/done: value " + std::to_string(e.considered + 11) +
                                   ": out of range; allowed: integers from 0 to " +
                                   std::to_string(e.considered + 10));

  Json behind = good;
  behind["progress"]["done"] = e.considered - 1;
  CHECK(refused(behind) == "c.checkpoint: at /search/considered: value " + considered +
                               ": a checkpoint's search covers exactly the candidates done; allowed: " +
                               std::to_string(e.considered - 1));

  Json shard = good;
  shard["schema"] = "moesim.plan-shard/1";
  CHECK(refused(shard) ==
        "c.checkpoint: at /schema: value \"moesim.plan-shard/1\": this is a plan shard, not a plan checkpoint (written "
        "by moesim plan "
        "--shard i/N --json FILE); allowed: moesim.plan-checkpoint/1");

  Json unknown = good;
  unknown["extra"] = 1;
  CHECK(refused(unknown).rfind("c.checkpoint: at /extra: ", 0) == 0);

  // The request is read through its field table (scenario/plan_request_fields.hpp): a knob takes its
  // scenario field's range, and the plan's one name for the micro-batch size is the scenario's.
  Json small_batch = good;
  small_batch["request"]["space"]["micro_batch_size"] = Json::array({1, 0});
  CHECK(refused(small_batch) == "c.checkpoint: at /request/space/micro_batch_size/1: value 0: out of range; allowed: "
                                "integers from 1 to 65536");
  Json old_name = good;
  old_name["request"]["space"]["micro_batch"] = Json::array({1});
  CHECK(refused(old_name) == "c.checkpoint: at /request/space/micro_batch: unknown key 'micro_batch'; allowed: cp, "
                             "dispatcher, ep, etp, gpus, micro_batch_size, pp, precision, recompute, redundant_experts_per_rank, tp, vpp");
  Json no_list = good;
  no_list["request"]["space"].erase("tp");
  CHECK(refused(no_list) ==
        "c.checkpoint: at /request/space/tp: required field is missing; allowed: a non-empty array: [1, 2, ...]");
  Json many_top = good;
  many_top["request"]["top"] = 100'001;
  CHECK(refused(many_top) ==
        "c.checkpoint: at /request/top: value 100001: out of range; allowed: integers from 1 to 100000");
}
