#include "config/plan_loader.hpp"

#include <algorithm>
#include <filesystem>

#include "config/builtin_scenarios.hpp"
#include "config/enum_field.hpp"
#include "config/field_section.hpp"
#include "config/json_reader.hpp"
#include "config/scenario_loader.hpp"
#include "config/scenario_sections.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/format.hpp"
#include "scenario/plan_request_fields.hpp"

namespace moesim::config {
namespace {


PlanQuestion question_from(const Json& obj, const std::string& file, const std::filesystem::path& base_dir) {
  PlanQuestion q;
  q.scenario = parse_scenario_spec(obj, file, base_dir);
  if (const auto it = obj.find("parallel"); it != obj.end() && it->is_object()) {
    for (const char* key : {"tp", "cp", "pp", "vpp", "ep", "etp"}) {
      if (it->contains(key)) q.given.emplace_back(key);
    }
  }
  if (const auto it = obj.find("training"); it != obj.end() && it->is_object() && it->contains("micro_batch_size")) {
    q.given.emplace_back("micro_batch_size");
  }
  if (obj.contains("recompute")) q.given.emplace_back("recompute");
  if (obj.contains("precision")) q.given.emplace_back("precision");
  if (const auto it = obj.find("moe"); it != obj.end() && it->is_object() && it->contains("dispatcher")) {
    q.given.emplace_back("dispatcher");
  }
  return q;
}

/// A non-empty array at `path`, or the message naming what it must hold.
const Json& non_empty_array(const Json* v, const std::string& path, const char* example) {
  if (!v) throw InputError(path, "", "required field is missing", std::string("a non-empty array: ") + example);
  if (!v->is_array() || v->empty()) throw InputError(path, describe_value(*v), "expected a non-empty array", example);
  return *v;
}

template <typename E, std::size_t N>
E enum_at(const Json& v, const std::string& path, const EnumNames<E, N>& table, const char* what) {
  if (v.is_string()) {
    if (const auto e = value_of(table, v.get<std::string>())) return *e;
  }
  throw InputError(path, describe_value(v), std::string("unknown ") + what, join(names_of(table)));
}

Precision precision_of(const Json& v, const std::string& path) { return enum_at(v, path, kPrecisionNames, "precision"); }
Dispatcher dispatcher_of(const Json& v, const std::string& path) {
  return enum_at(v, path, kDispatcherNames, "dispatcher");
}

/// Reads one object of a plan request through its field table (scenario/plan_request_fields.hpp).
/// Every list of the space is required: a written request echoes the completed space it searched.
class RequestReader {
 public:
  RequestReader(const ObjectReader& r, const std::string& file, const std::filesystem::path& base_dir)
      : r_(r), file_(file), base_dir_(base_dir) {}

  template <typename Inner>
  void section(const FieldInfo& info, Inner&& inner) {
    read_field_section(r_, info, inner, [&](const ObjectReader& sub) {
      RequestReader reader(sub, file_, base_dir_);
      inner(reader);
    });
  }
  void special(const FieldInfo& info, Scenario& member) const {
    const Json* v = r_.get(info.key);
    if (!v) throw InputError(r_.path_of(info.key), "", "required field is missing", std::string(info.doc));
    try {
      member = parse_scenario_spec(*v, file_, base_dir_);
    } catch (InputError& e) {
      e.under(r_.path_of(info.key));
      throw;
    }
  }
  void special(const FieldInfo& info, std::vector<RecomputeSpec>& member) const {
    const std::string path = r_.path_of(info.key);
    const Json& list = non_empty_array(r_.get(info.key), path, "[\"none\", {\"granularity\": ...}, ...]");
    member.clear();
    for (std::size_t i = 0; i < list.size(); ++i) {
      try {
        member.push_back(detail::read_recompute(&list[i]));
      } catch (InputError& e) {
        e.under(path + "/" + std::to_string(i));
        throw;
      }
    }
  }
  void integer_list(const FieldInfo& info, std::vector<std::int64_t>& member, IntRange range) const {
    const std::string path = r_.path_of(info.key);
    const Json& list = non_empty_array(r_.get(info.key), path, "[1, 2, ...]");
    member.clear();
    for (std::size_t i = 0; i < list.size(); ++i) member.push_back(to_int(list[i], path + "/" + std::to_string(i), range));
  }
  template <typename E, std::size_t N>
  void enumeration_list(const FieldInfo& info, std::vector<E>& member, const EnumNames<E, N>& table) const {
    const std::string path = r_.path_of(info.key);
    const Json& list = non_empty_array(r_.get(info.key), path, "[NAME, ...]");
    member.clear();
    for (std::size_t i = 0; i < list.size(); ++i) {
      member.push_back(enum_at(list[i], path + "/" + std::to_string(i), table, std::string(info.key).c_str()));
    }
  }
  template <typename E, std::size_t N>
  void enumeration(const FieldInfo& info, E& member, const EnumNames<E, N>& table) const {
    member = get_enum_value(r_, info.key, member, table);
  }
  void number(const FieldInfo& info, double& member, NumberRange range) const {
    member = r_.get_number(info.key, member, range);
  }
  void integer(const FieldInfo& info, std::int64_t& member, IntRange range) const {
    member = r_.get_int(info.key, member, range);
  }
  void boolean(const FieldInfo& info, bool& member) const { member = r_.get_bool(info.key, member); }

 private:
  const ObjectReader& r_;
  const std::string& file_;
  const std::filesystem::path& base_dir_;
};

PlanRequest read_request(const Json& v, const std::string& file, const std::filesystem::path& base_dir) {
  PlanRequest req;
  FieldKeys table;
  plan_request_fields::visit_plan_request(table, req);
  const ObjectReader r(v, "/request", table.keys);
  RequestReader reader(r, file, base_dir);
  plan_request_fields::visit_plan_request(reader, req);
  return req;
}

Candidate read_candidate(const Json& v, const std::string& path, const SearchSpace& space) {
  const ObjectReader r(v, path, {"index", "gpus", "tp", "cp", "pp", "vpp", "ep", "etp", "micro_batch_size", "recompute",
                                 "precision", "dispatcher", "redundant_per_rank", "offload"});
  using scenario_fields::kGpus;
  using scenario_fields::kMicroBatch;
  using scenario_fields::kParallelSize;
  Candidate c;
  c.index = r.require_int("index", {0, std::numeric_limits<std::int64_t>::max()});
  c.gpus = r.require_int("gpus", kGpus);
  c.tp = r.require_int("tp", kParallelSize);
  c.cp = r.require_int("cp", kParallelSize);
  c.pp = r.require_int("pp", kParallelSize);
  c.vpp = r.require_int("vpp", kParallelSize);
  c.ep = r.require_int("ep", kParallelSize);
  c.etp = r.require_int("etp", kParallelSize);
  c.micro_batch_size = r.require_int("micro_batch_size", kMicroBatch);
  c.recompute = r.require_int("recompute", {0, static_cast<std::int64_t>(space.recompute.size()) - 1});
  const Json* p = r.get("precision");
  if (!p) throw InputError(r.path_of("precision"), "", "required field is missing", "a precision name");
  c.precision = precision_of(*p, r.path_of("precision"));
  const Json* d = r.get("dispatcher");
  if (!d) throw InputError(r.path_of("dispatcher"), "", "required field is missing", "a dispatcher name");
  c.dispatcher = dispatcher_of(*d, r.path_of("dispatcher"));
  if (r.get("redundant_per_rank")) {
    c.redundant_per_rank = r.require_int("redundant_per_rank", plan_request_fields::kRedundantPerRank);
  }
  c.offload = r.get_bool("offload", false);
  return c;
}

}  // namespace

PlanQuestion load_plan_question(const std::string& arg) {
  std::error_code ec;
  if (arg == kStdStream || std::filesystem::exists(arg, ec)) {
    std::filesystem::path base_dir = std::filesystem::path(arg).parent_path();
    if (base_dir.empty()) base_dir = ".";
    return question_from(load_json_file(arg), arg, base_dir);
  }
  if (const auto text = builtin_scenario_text(arg)) {
    const std::string label = "builtin:" + arg;
    return question_from(parse_json_text(std::string(*text), label), label, std::filesystem::current_path());
  }
  throw InputError("", "", "file not found, and not a built-in scenario" + did_you_mean(arg, builtin_scenario_names()),
                   join(builtin_scenario_names()))
      .in_file(arg);
}

PlanQuestion plan_question_from_flags(const std::string& model, const std::string& system, std::int64_t gpus,
                                      std::int64_t seq_length, std::int64_t global_batch) {
  const Json obj{{"name", model + " on " + system},
                 {"model", model},
                 {"system", Json{{"preset", system}, {"gpus", gpus}}},
                 {"training", Json{{"seq_length", seq_length}, {"global_batch_size", global_batch}}}};
  PlanQuestion q;
  q.scenario = parse_scenario_spec(obj, "command line", std::filesystem::current_path());
  return q;
}

void constrain_space(const PlanQuestion& q, SearchSpace& space) {
  const Scenario& s = q.scenario;
  auto given = [&](const char* key) { return std::find(q.given.begin(), q.given.end(), key) != q.given.end(); };
  if (given("tp")) space.tp = {s.parallel.tp};
  if (given("cp")) space.cp = {s.parallel.cp};
  if (given("pp")) space.pp = {s.parallel.pp};
  if (given("vpp")) space.vpp = {s.parallel.vpp};
  if (given("ep")) space.ep = {s.parallel.ep};
  // Megatron's expert TP defaults to TP: a scenario that fixes tp but not etp fixes etp too.
  if (given("etp") || given("tp")) space.etp = {s.parallel.etp};
  if (given("micro_batch_size")) space.micro_batch_size = {s.training.micro_batch_size};
  if (given("recompute")) space.recompute = {s.recompute};
  if (given("precision")) space.precision = {s.precision};
  if (given("dispatcher")) space.dispatcher = {s.moe.dispatcher};
}

namespace {

/// The `search` object shared by shards and checkpoints.
SearchEvaluation read_search(const Json& search, const SearchSpace& space) {
  const ObjectReader sr(search, "/search", {"shard", "shards", "considered", "feasible", "rejections", "smallest"});
  SearchEvaluation ev;
  ev.shards = sr.require_int("shards", {1, 1 << 20});
  ev.shard = sr.require_int("shard", {0, ev.shards - 1});
  ev.considered = sr.require_int("considered", {0, std::numeric_limits<std::int64_t>::max()});
  if (const Json* f = sr.get("feasible")) {
    if (!f->is_array()) throw InputError("/search/feasible", describe_value(*f), "expected an array", "[{candidate, step_time_s, ...}]");
    for (std::size_t i = 0; i < f->size(); ++i) {
      const std::string p = "/search/feasible/" + std::to_string(i);
      const ObjectReader er((*f)[i], p, {"candidate", "step_time_s", "peak_bytes", "peak_stage"});
      CandidateEstimate e;
      const Json* c = er.get("candidate");
      if (!c) throw InputError(er.path_of("candidate"), "", "required field is missing", "a candidate object");
      e.candidate = read_candidate(*c, er.path_of("candidate"), space);
      e.step_time_s = er.require_number("step_time_s", {0, std::numeric_limits<double>::max(), true});
      e.peak_bytes = er.require_number("peak_bytes");
      e.peak_stage = er.require_int("peak_stage", {0, 1 << 20});
      ev.feasible.push_back(e);
    }
  }
  if (const Json* rj = sr.get("rejections")) {
    if (!rj->is_array()) throw InputError("/search/rejections", describe_value(*rj), "expected an array", "[{reason, count, ...}]");
    for (std::size_t i = 0; i < rj->size(); ++i) {
      const std::string p = "/search/rejections/" + std::to_string(i);
      const ObjectReader rr((*rj)[i], p, {"reason", "count", "example", "detail"});
      Rejection r;
      r.reason = rr.require_string("reason");
      r.count = rr.require_int("count", {1, std::numeric_limits<std::int64_t>::max()});
      const Json* ex = rr.get("example");
      if (!ex) throw InputError(rr.path_of("example"), "", "required field is missing", "a candidate object");
      r.example = read_candidate(*ex, rr.path_of("example"), space);
      r.example_detail = rr.get_string("detail", "");
      ev.rejections.push_back(r);
    }
  }
  if (const Json* sm = sr.get("smallest"); sm && !sm->is_null()) {
    const ObjectReader mr(*sm, "/search/smallest", {"candidate", "peak_bytes", "peak_stage", "capacity_bytes"});
    ev.smallest.present = true;
    const Json* c = mr.get("candidate");
    if (!c) throw InputError(mr.path_of("candidate"), "", "required field is missing", "a candidate object");
    ev.smallest.candidate = read_candidate(*c, mr.path_of("candidate"), space);
    ev.smallest.peak_bytes = mr.require_number("peak_bytes");
    ev.smallest.peak_stage = mr.require_int("peak_stage", {0, 1 << 20});
    ev.smallest.capacity_bytes = mr.require_number("capacity_bytes");
  }
  return ev;
}

/// A shard or checkpoint document: schema, version, request and search; `progress` only in checkpoints.
struct SearchDocument {
  PlanRequest request;
  SearchEvaluation evaluation;
  std::string version;
  std::int64_t done = 0, total = 0;
};

SearchDocument read_search_document(std::string_view text, const std::string& file, const char* schema_wanted,
                                    const char* written_by) {
  try {
    const Json obj = parse_json_text(std::string(text), file);
    // Another moesim document (a whole plan given to merge) is named as what it is, before its keys
    // would be reported one by one as unknown.
    if (obj.is_object()) {
      const auto schema = obj.find("schema");
      if (schema != obj.end() && schema->is_string() && schema->get<std::string>() != schema_wanted) {
        const std::string found = schema->get<std::string>();
        const std::string what = found == "moesim.plan/1"            ? "this is a plan (moesim.plan/1)"
                                 : found == "moesim.result/1"        ? "this is a result (moesim.result/1)"
                                 : found == kPlanShardSchema         ? "this is a plan shard"
                                 : found == kPlanCheckpointSchema    ? "this is a plan checkpoint"
                                                                     : "this is not a moesim search document";
        throw InputError("/schema", describe_value(*schema), what + ", not a " + written_by, schema_wanted);
      }
    }
    const bool checkpoint = std::string_view(schema_wanted) == kPlanCheckpointSchema;
    std::vector<std::string> keys{"schema", "moesim_version", "request", "search"};
    if (checkpoint) keys.emplace_back("progress");
    const ObjectReader top(obj, "", keys);
    const std::string schema = top.require_string("schema");
    if (schema != schema_wanted) {
      throw InputError("/schema", describe_value(Json(schema)), std::string("not a ") + written_by, schema_wanted);
    }
    SearchDocument out;
    out.version = top.get_string("moesim_version", "");
    std::filesystem::path base_dir = std::filesystem::path(file).parent_path();
    if (base_dir.empty()) base_dir = ".";
    const Json* request = top.get("request");
    if (!request) throw InputError("/request", "", "required field is missing", "the plan request");
    out.request = read_request(*request, file, base_dir);
    const Json* search = top.get("search");
    if (!search) throw InputError("/search", "", "required field is missing", "the search");
    out.evaluation = read_search(*search, out.request.space);
    if (checkpoint) {
      const Json* progress = top.get("progress");
      if (!progress) throw InputError("/progress", "", "required field is missing", "{\"done\": N, \"total\": M}");
      const ObjectReader pr(*progress, "/progress", {"done", "total"});
      out.total = pr.require_int("total", {0, std::numeric_limits<std::int64_t>::max()});
      out.done = pr.require_int("done", {0, out.total});
      if (out.evaluation.considered != out.done) {
        throw InputError("/search/considered", std::to_string(out.evaluation.considered),
                         "a checkpoint's search covers exactly the candidates done", std::to_string(out.done));
      }
    }
    const auto found = static_cast<std::int64_t>(out.evaluation.feasible.size());
    if (found > out.evaluation.considered) {
      throw InputError("/search/feasible", std::to_string(found) + " candidates",
                       "more feasible candidates than candidates considered",
                       "at most " + std::to_string(out.evaluation.considered));
    }
    return out;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

}  // namespace

PlanShard parse_plan_shard(std::string_view text, const std::string& file) {
  SearchDocument d = read_search_document(text, file, kPlanShardSchema, "plan shard (written by moesim plan --shard i/N --json FILE)");
  return {std::move(d.request), std::move(d.evaluation)};
}

PlanShard load_plan_shard(const std::string& path) { return parse_plan_shard(read_text_file(path), path); }

PlanCheckpoint parse_plan_checkpoint(std::string_view text, const std::string& file) {
  SearchDocument d = read_search_document(text, file, kPlanCheckpointSchema,
                                          "plan checkpoint (written by moesim plan --shard i/N --json FILE)");
  PlanCheckpoint c;
  c.request = std::move(d.request);
  c.evaluation = std::move(d.evaluation);
  c.moesim_version = std::move(d.version);
  c.done = d.done;
  c.total = d.total;
  return c;
}

PlanCheckpoint load_plan_checkpoint(const std::string& path) { return parse_plan_checkpoint(read_text_file(path), path); }

}  // namespace moesim::config
