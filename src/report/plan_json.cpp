#include "report/plan_json.hpp"

#include <cmath>

#include "core/error.hpp"
#include "report/finite_number.hpp"
#include "core/version.hpp"
#include "report/result_json.hpp"
#include "report/scenario_json.hpp"
#include "scenario/plan_request_fields.hpp"

namespace moesim::report {
namespace {

using Json = nlohmann::json;

double finite(double v, const char* field) { return finite_number(v, "plan", field); }

/// Writes one object of a plan request keyed as its field table keys it
/// (scenario/plan_request_fields.hpp), so the echo reads back through config/plan_loader.
class RequestEchoWriter {
 public:
  explicit RequestEchoWriter(Json& out) : out_(out) {}

  template <typename Inner>
  void section(const FieldInfo& info, Inner&& inner) {
    Json sub = Json::object();
    RequestEchoWriter writer(sub);
    inner(writer);
    out_[std::string(info.key)] = std::move(sub);
  }
  void special(const FieldInfo& info, const Scenario& member) { out_[std::string(info.key)] = scenario_to_json(member); }
  void special(const FieldInfo& info, const std::vector<RecomputeSpec>& member) {
    Json list = Json::array();
    for (const auto& r : member) list.push_back(recompute_to_json(r));
    out_[std::string(info.key)] = std::move(list);
  }
  void integer_list(const FieldInfo& info, const std::vector<std::int64_t>& member, IntRange /*range*/) {
    out_[std::string(info.key)] = member;
  }
  template <typename E, std::size_t N>
  void enumeration_list(const FieldInfo& info, const std::vector<E>& member, const EnumNames<E, N>& table) {
    Json list = Json::array();
    for (E e : member) list.push_back(std::string(name_of(table, e)));
    out_[std::string(info.key)] = std::move(list);
  }
  template <typename E, std::size_t N>
  void enumeration(const FieldInfo& info, const E& member, const EnumNames<E, N>& table) {
    out_[std::string(info.key)] = std::string(name_of(table, member));
  }
  void number(const FieldInfo& info, const double& member, NumberRange /*range*/) {
    out_[std::string(info.key)] = finite_number(member, "plan", info.key);
  }
  void integer(const FieldInfo& info, const std::int64_t& member, IntRange /*range*/) { out_[std::string(info.key)] = member; }
  void boolean(const FieldInfo& info, const bool& member) { out_[std::string(info.key)] = member; }

 private:
  Json& out_;
};

Json estimate_to_json(const CandidateEstimate& e) {
  return Json{{"candidate", candidate_to_json(e.candidate)},
              {"step_time_s", finite(e.step_time_s, "step_time_s")},
              {"peak_bytes", finite(e.peak_bytes, "peak_bytes")},
              {"peak_stage", e.peak_stage}};
}

Json rejection_to_json(const Rejection& r) {
  return Json{{"reason", r.reason}, {"count", r.count}, {"example", candidate_to_json(r.example)},
              {"detail", r.example_detail}};
}

Json smallest_to_json(const SmallestFootprint& f) {
  if (!f.present) return Json();
  return Json{{"candidate", candidate_to_json(f.candidate)}, {"peak_bytes", finite(f.peak_bytes, "smallest.peak_bytes")},
              {"peak_stage", f.peak_stage}, {"capacity_bytes", finite(f.capacity_bytes, "smallest.capacity_bytes")}};
}

/// The activation modules the candidate offloads: the scenario's own, or the planner's rescue.
Json offload_modules_json(const PlanRequest& req, const Candidate& c) {
  Json out = Json::array();
  const auto modules = c.offload ? rescue_offload_modules(req.base.model.is_moe()) : req.base.offload.activations;
  for (OffloadModule m : modules) out.push_back(std::string(to_string(m)));
  return out;
}

Json layout_of(const PlanRequest& req, const Candidate& c) {
  const std::int64_t mp = c.tp * c.cp * c.pp;
  return Json{{"gpus", c.gpus},
              {"tp", c.tp},
              {"cp", c.cp},
              {"pp", c.pp},
              {"vpp", c.vpp},
              {"ep", c.ep},
              {"etp", c.etp},
              {"dp", c.gpus / mp},
              {"edp", c.gpus / (c.etp * c.ep * c.pp)},
              {"micro_batch_size", c.micro_batch_size},
              {"recompute", recompute_to_json(req.space.recompute.at(static_cast<std::size_t>(c.recompute)))},
              {"precision", std::string(to_string(c.precision))},
              {"dispatcher", std::string(to_string(c.dispatcher))},
              {"redundant_experts", req.base.moe.placement.eplb() && c.ep > 1 ? c.redundant_per_rank * c.ep : 0},
              {"offload_activations", offload_modules_json(req, c)}};
}

Json row_to_json(const PlanRequest& req, const PlanRow& row) {
  const Result& r = row.result;
  const double capacity = r.memory.capacity_bytes;
  Json j{{"rank", row.rank},
         {"candidate_index", row.estimate.candidate.index},
         {"layout", layout_of(req, row.estimate.candidate)},
         {"fidelity", row.simulated ? "simulation" : "estimate"},
         {"tied", row.tied},
         {"step_time_s", finite(r.step_time_s, "step_time_s")},
         {"estimate_step_time_s", finite(row.estimate.step_time_s, "estimate_step_time_s")},
         {"tokens_per_s", finite(r.tokens_per_s, "tokens_per_s")},
         {"tokens_per_s_per_gpu", finite(r.tokens_per_s_per_gpu, "tokens_per_s_per_gpu")},
         {"tokens_per_gpu_hour", finite(r.tokens_per_s_per_gpu * 3600.0, "tokens_per_gpu_hour")},
         {"model_tflops_per_gpu", finite(r.model_tflops_per_gpu, "model_tflops_per_gpu")},
         {"mfu", finite(r.mfu, "mfu")},
         {"peak_memory_bytes", finite(row.estimate.peak_bytes, "peak_memory_bytes")},
         {"peak_stage", row.estimate.peak_stage},
         {"memory_headroom_bytes", finite(capacity - row.estimate.peak_bytes, "memory_headroom_bytes")},
         {"breakdown", breakdown_to_json(r.breakdown)}};
  if (req.token_budget > 0) j["time_to_tokens_s"] = finite(req.token_budget / r.tokens_per_s, "time_to_tokens_s");
  return j;
}

}  // namespace

Json candidate_to_json(const Candidate& c) {
  return Json{{"index", c.index}, {"gpus", c.gpus}, {"tp", c.tp},  {"cp", c.cp},   {"pp", c.pp},
              {"vpp", c.vpp},     {"ep", c.ep},     {"etp", c.etp}, {"micro_batch_size", c.micro_batch_size},
              {"recompute", c.recompute}, {"precision", std::string(to_string(c.precision))},
              {"dispatcher", std::string(to_string(c.dispatcher))}, {"redundant_per_rank", c.redundant_per_rank},
              {"offload", c.offload}};
}

Json plan_request_to_json(const PlanRequest& r) {
  Json out = Json::object();
  RequestEchoWriter writer(out);
  plan_request_fields::visit_plan_request(writer, r);
  return out;
}

std::string plan_request_to_json_text(const PlanRequest& r) {
  return plan_request_to_json(r).dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json plan_to_json(const Plan& p) {
  const PlanRequest& req = p.request;
  Json rejections = Json::array();
  std::int64_t rejected = 0;
  for (const auto& r : p.rejections) {
    rejections.push_back(rejection_to_json(r));
    rejected += r.count;
  }
  Json ranked = Json::array();
  for (const auto& row : p.rows) ranked.push_back(row_to_json(req, row));
  Json deltas = Json::array();
  for (const auto& d : p.vs_runner_up) {
    deltas.push_back(Json{{"category", d.category}, {"winner_s", finite(d.winner_s, "winner_s")},
                          {"runner_up_s", finite(d.runner_up_s, "runner_up_s")}});
  }
  Json precision = Json::array();
  for (const auto& a : p.precision) {
    precision.push_back(Json{{"precision", std::string(to_string(a.precision))},
                             {"searched", a.searched},
                             {"fits", a.fits},
                             {"estimate_step_time_s", finite(a.step_time_s, "precision.step_time_s")},
                             {"speedup", finite(a.speedup, "precision.speedup")},
                             {"best", a.best_present ? Json{{"layout", layout_of(req, a.best)},
                                                            {"estimate_step_time_s", finite(a.best_step_time_s, "precision.best_step_time_s")},
                                                            {"speedup", finite(a.best_speedup, "precision.best_speedup")}}
                                                     : Json()},
                             {"risk", a.risk}});
  }
  Json skew = Json::array();
  for (const auto& s : p.skew) {
    skew.push_back(Json{{"rank", s.rank},
                        {"sigma", finite(s.sigma, "skew.sigma")},
                        {"step_time_s", finite(s.step_time_s, "skew.step_time_s")},
                        {"slowdown", finite(s.slowdown, "skew.slowdown")},
                        {"max_imbalance", finite(s.max_imbalance, "skew.max_imbalance")}});
  }
  Json pareto = Json::array();
  for (const auto& pt : p.pareto) {
    pareto.push_back(Json{{"candidate_index", pt.candidate.index},
                          {"layout", layout_of(req, pt.candidate)},
                          {"tokens_per_s", finite(pt.tokens_per_s, "pareto.tokens_per_s")},
                          {"memory_headroom_bytes", finite(pt.headroom_bytes, "pareto.memory_headroom_bytes")}});
  }
  return Json{{"schema", kPlanSchema},
              {"moesim_version", std::string(kVersion)},
              {"request", plan_request_to_json(req)},
              {"search", Json{{"considered", p.considered}, {"feasible", p.feasible}, {"rejected", rejected},
                              {"rejections", rejections}}},
              {"ranked", ranked},
              {"winner", result_to_json(p.rows.front().result)},
              {"explanation", p.explanation},
              {"vs_runner_up", deltas},
              {"precision_advice", precision},
              {"skew_sensitivity", skew},
              {"pareto", pareto},
              {"not_searched", p.not_searched}};
}

std::string plan_to_json_text(const Plan& p) {
  return plan_to_json(p).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

namespace {

Json search_document(const char* schema, const PlanRequest& r, const SearchEvaluation& e) {
  Json feasible = Json::array();
  for (const auto& f : e.feasible) feasible.push_back(estimate_to_json(f));
  Json rejections = Json::array();
  for (const auto& rj : e.rejections) rejections.push_back(rejection_to_json(rj));
  return Json{{"schema", schema},
              {"moesim_version", std::string(kVersion)},
              {"request", plan_request_to_json(r)},
              {"search", Json{{"shard", e.shard},
                              {"shards", e.shards},
                              {"considered", e.considered},
                              {"feasible", feasible},
                              {"rejections", rejections},
                              {"smallest", smallest_to_json(e.smallest)}}}};
}

}  // namespace

// Compact: a shard can hold tens of thousands of candidates and is read by programs, not people.
std::string search_shard_to_json_text(const PlanRequest& r, const SearchEvaluation& e) {
  return search_document(kPlanShardSchema, r, e).dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string search_checkpoint_to_json_text(const PlanRequest& r, const SearchEvaluation& e, std::int64_t done,
                                           std::int64_t total) {
  Json j = search_document(kPlanCheckpointSchema, r, e);
  j["progress"] = Json{{"done", done}, {"total", total}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
