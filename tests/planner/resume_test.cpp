// A search stopped early and resumed from its checkpoint ends identical to one that never stopped
// (issue 11): the logic behind `moesim plan --shard i/N --resume`, without processes or signals.
#include <doctest/doctest.h>

#include "config/plan_loader.hpp"
#include "planner/search.hpp"
#include "planner/search_space.hpp"
#include "report/plan_json.hpp"

using namespace moesim;

namespace {

PlanRequest mixtral_request() {
  PlanRequest r;
  r.base = config::plan_question_from_flags("mixtral-8x7b", "hgx-h100", 64, 4096, 256).scenario;
  r.space.micro_batch = {1, 2};
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

TEST_CASE("periodic checkpoints grow in enumeration order and each one resumes to the same result") {
  const PlanRequest req = mixtral_request();
  planner::SearchOptions o;
  o.threads = 2;
  o.checkpoint_every_s = 0;  // after every block
  std::vector<std::string> saves;
  std::int64_t last_done = 0;
  o.checkpoint = [&](const SearchEvaluation& so_far, std::int64_t total) {
    CHECK(so_far.considered > last_done);
    last_done = so_far.considered;
    saves.push_back(report::search_checkpoint_to_json_text(req, so_far, so_far.considered, total));
  };
  const SearchEvaluation full = planner::run_search(req, o).evaluation;
  REQUIRE(saves.size() >= 2);
  const std::string expected = report::search_shard_to_json_text(req, full);
  const config::PlanCheckpoint as_read = config::parse_plan_checkpoint(saves[saves.size() / 2], "middle.checkpoint");
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
