// `moesim plan` (search layouts and precisions, recommend, explain) and `moesim merge` (join the
// shards of a plan run as separate processes). docs/planner.md.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/field_option.hpp"
#include "cli/progress_line.hpp"
#include "cli/option_checks.hpp"
#include "cli/plan_args.hpp"
#include "cli/plan_print.hpp"
#include "cli/report_topology.hpp"
#include "config/plan_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/format.hpp"
#include "core/interrupt.hpp"
#include "core/version.hpp"
#include "planner/planner.hpp"
#include "planner/search.hpp"
#include "planner/search_space.hpp"
#include "report/html_report.hpp"
#include "report/plan_html.hpp"
#include "report/plan_json.hpp"
#include "scenario/megatron_args.hpp"

namespace moesim::cli {
namespace {

struct PlanCliOptions {
  std::string scenario, model, system, gpus, tp, cp, pp, vpp, ep, etp, micro_batch_size, recompute, precision, dispatcher;
  std::string redundant_experts;
  std::string objective = "throughput", shard, json_out, html_out;
  std::string emit;  ///< "megatron" or "bridge": print the winner so instead of the table
  std::int64_t seq = 0, global_batch = 0, top = 10, finalists = 8;
  double token_budget = 0;
  double memory_headroom_gib = PlanRequest{}.memory_headroom_gib;
  int threads = 0;
  double checkpoint_every_s = 30;
  double host_sync_idle_s = -1;  ///< < 0: the scenario's moe.host_sync_idle_s (0 with the flags form)
  bool no_skew = false, quiet = false, resume = false;
};

// Progress on stderr when it is a terminal (cli/progress_line.hpp): the search, the finalists'
// simulations, the searches of precision advice and the skew runs, each with its percent, rate and ETA.
planner::Progress progress_of(const std::shared_ptr<ProgressLine>& line) {
  return [line](std::string_view phase, std::int64_t done, std::int64_t total) {
    const bool simulations = phase == "simulating finalists" || phase == "skew sensitivity";
    line->update(phase, static_cast<double>(done), static_cast<double>(total), simulations ? "simulations" : "candidates");
  };
}

PlanRequest build_request(const PlanCliOptions& o) {
  const bool flags_form = !o.model.empty() || !o.system.empty() || o.seq > 0 || o.global_batch > 0;
  config::PlanQuestion q;
  if (!o.scenario.empty()) {
    if (flags_form) {
      throw InputError("--model/--system/--seq/--global-batch", o.scenario,
                       "give either a scenario or --model, --system, --gpus, --seq and --global-batch, not both",
                       "moesim plan SCENARIO [--gpus N], or moesim plan --model M --system S --gpus N --seq L --global-batch B");
    }
    q = config::load_plan_question(o.scenario);
  } else {
    if (o.model.empty() || o.system.empty() || o.gpus.empty() || o.seq <= 0 || o.global_batch <= 0) {
      throw InputError("moesim plan", "", "a plan needs a scenario, or --model, --system, --gpus, --seq and --global-batch",
                       "moesim plan SCENARIO, or moesim plan --model M --system S --gpus N --seq L --global-batch B");
    }
  }
  std::vector<std::int64_t> gpus;
  if (!o.gpus.empty()) gpus = parse_int_list(plan_list_field("space.gpus"), o.gpus, true);
  if (o.scenario.empty()) q = config::plan_question_from_flags(o.model, o.system, gpus.front(), o.seq, o.global_batch);
  PlanRequest req;
  req.base = q.scenario;
  config::constrain_space(q, req.space);
  if (!gpus.empty()) {
    req.space.gpus = gpus;
    req.base.system.gpus = gpus.front();
  }
  // Lists on the command line override what the scenario fixes.
  if (!o.tp.empty()) req.space.tp = parse_int_list(plan_list_field("space.tp"), o.tp, false);
  if (!o.cp.empty()) req.space.cp = parse_int_list(plan_list_field("space.cp"), o.cp, false);
  if (!o.pp.empty()) req.space.pp = parse_int_list(plan_list_field("space.pp"), o.pp, false);
  if (!o.vpp.empty()) req.space.vpp = parse_int_list(plan_list_field("space.vpp"), o.vpp, false);
  if (!o.ep.empty()) req.space.ep = parse_int_list(plan_list_field("space.ep"), o.ep, false);
  if (!o.etp.empty()) req.space.etp = parse_int_list(plan_list_field("space.etp"), o.etp, false);
  if (!o.micro_batch_size.empty()) {
    req.space.micro_batch_size = parse_int_list(plan_list_field("space.micro_batch_size"), o.micro_batch_size, false);
  }
  if (!o.recompute.empty()) req.space.recompute = parse_recompute_list(o.recompute);
  if (!o.precision.empty()) req.space.precision = parse_precisions(o.precision, req.base.system.gpu);
  if (!o.dispatcher.empty()) req.space.dispatcher = parse_dispatchers(o.dispatcher);
  if (!o.redundant_experts.empty()) {
    req.space.redundant_experts_per_rank =
        parse_int_list(plan_list_field("space.redundant_experts_per_rank"), o.redundant_experts, false);
  }
  if (o.host_sync_idle_s >= 0) req.base.moe.host_sync_idle_s = o.host_sync_idle_s;
  req.objective = *value_of(kPlanObjectiveNames, o.objective);  // CLI11 checked it is a name
  if (req.objective == PlanObjective::kTimeToTokens && !(o.token_budget > 0)) {
    throw InputError("--token-budget", fmt::format("{}", o.token_budget), "objective time-to-tokens needs a token budget",
                     "a number of tokens > 0, e.g. 1e12");
  }
  req.token_budget = o.token_budget;
  req.top = o.top;
  req.finalists = o.finalists;
  req.memory_headroom_gib = o.memory_headroom_gib;
  req.skew_sensitivity = !o.no_skew;
  planner::complete_space(req);
  return req;
}

// Every output of the plan, then the table; nothing is in place before all are written.
void write_outputs(const Plan& plan, const PlanCliOptions& o, OutputBatch& outputs) {
  if (!o.json_out.empty()) outputs.write(o.json_out, report::plan_to_json_text(plan));
  if (!o.html_out.empty()) {
    // The winner's cluster (its GPU count when the plan spans several).
    Scenario cluster = plan.request.base;
    cluster.system.gpus = plan.rows.front().estimate.candidate.gpus;
    const auto topology = report_topology(cluster);
    report::HtmlExtras extras;
    extras.topology = topology ? &*topology : nullptr;
    outputs.write(o.html_out, report::plan_to_html(plan, extras));
  }
  const bool stdout_taken = o.json_out == kStdStream || o.html_out == kStdStream;
  if (!o.quiet && !stdout_taken) {
    const Scenario& winner = plan.rows.front().result.scenario;
    if (o.emit == "megatron") {
      std::fputs(megatron_command_text(megatron_args(winner)).c_str(), stdout);
    } else if (o.emit == "bridge") {
      for (const std::string& line : bridge_overrides(winner)) std::fputs((line + "\n").c_str(), stdout);
    } else {
      std::fputs(format_plan(plan).c_str(), stdout);
    }
  }
  outputs.commit();
}

// A stopped plan (SIGINT, SIGTERM): what it found, on stdout, and the conventional exit status.
int report_stop(const PlanRequest& req, const SearchEvaluation& so_far, std::int64_t total, const PlanCliOptions& o,
                const std::string& saved) {
  std::fprintf(stderr, "\nmoesim plan: stopped by signal %d after %lld of %lld candidates; %s\n", stop_signal(),
               static_cast<long long>(so_far.considered), static_cast<long long>(total), saved.c_str());
  std::fputs(format_partial_search(req, so_far, total, o.top).c_str(), stdout);
  std::fflush(stdout);
  return stop_exit_code();
}

// The checkpoint a --resume continues from, checked to belong to this very command.
config::PlanCheckpoint load_checkpoint_for(const std::string& path, const PlanRequest& req) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw InputError("--resume", path, "no checkpoint to resume from (a sweep that finished removes it)",
                     "the same command without --resume");
  }
  config::PlanCheckpoint cp = config::load_plan_checkpoint(path);
  if (cp.moesim_version != kVersion) {
    throw InputError("/moesim_version", cp.moesim_version,
                     "the checkpoint was written by another moesim version, whose estimates may differ", std::string(kVersion))
        .in_file(path);
  }
  if (report::plan_request_to_json_text(cp.request) != report::plan_request_to_json_text(req)) {
    throw InputError("/request", "", "the checkpoint answers a different plan request than this command",
                     "the same moesim plan command as the stopped run")
        .in_file(path);
  }
  return cp;
}

// `plan --shard i/N --json FILE`: the partial search, checkpointed to FILE.checkpoint as it goes so
// that a killed sweep resumes (--resume) where it stopped; the checkpoint goes once FILE is written.
int run_shard(const PlanRequest& req, planner::SearchOptions so, const PlanCliOptions& o, ProgressLine& progress) {
  const std::string checkpoint = o.json_out + ".checkpoint";
  std::optional<config::PlanCheckpoint> resumed;
  if (o.resume) {
    resumed = load_checkpoint_for(checkpoint, req);
    so.resume = &resumed->evaluation;
    if (!o.quiet) {
      std::fprintf(stderr, "resuming %s: %lld of %lld candidates already searched\n", checkpoint.c_str(),
                   static_cast<long long>(resumed->done), static_cast<long long>(resumed->total));
    }
  }
  so.checkpoint = [&](const SearchEvaluation& so_far, std::int64_t total) {
    write_file_atomically(checkpoint, report::search_checkpoint_to_json_text(req, so_far, so_far.considered, total));
  };
  so.checkpoint_every_s = o.checkpoint_every_s;
  const planner::SearchRun run = planner::run_search(req, so);
  progress.clear();
  if (!run.complete()) {
    return report_stop(req, run.evaluation, run.total, o,
                       "progress saved in " + checkpoint + " (add --resume to the same command to continue)");
  }
  const SearchEvaluation& ev = run.evaluation;
  OutputBatch outputs;
  outputs.expect("--json", o.json_out);
  outputs.write(o.json_out, report::search_shard_to_json_text(req, ev));
  outputs.commit();
  std::error_code ec;
  std::filesystem::remove(checkpoint, ec);
  if (!o.quiet) {
    std::printf("shard %lld/%lld: %lld candidates, %zu fit; wrote %s (join the shards with moesim merge)\n",
                static_cast<long long>(ev.shard), static_cast<long long>(ev.shards), static_cast<long long>(ev.considered),
                ev.feasible.size(), o.json_out.c_str());
  }
  return 0;
}

}  // namespace

void register_plan(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<PlanCliOptions>();
  auto* sub = app.add_subcommand("plan", "Search layouts and precisions; recommend the fastest that fit and say why.");
  sub->add_option("scenario", o->scenario,
                  "scenario file or built-in name; its parallel / micro_batch_size / recompute / precision fields, where "
                  "given, fix those knobs");
  sub->add_option("--model", o->model, "model preset (`moesim models list`)");
  sub->add_option("--system", o->system, "cluster preset (`moesim systems list`)");
  add_plan_field_option(sub, "space.gpus", o->gpus);
  add_field_option(sub, "training.seq_length", o->seq);
  add_field_option(sub, "training.global_batch_size", o->global_batch);
  for (auto [path, target] : {std::pair{"space.tp", &o->tp}, {"space.cp", &o->cp}, {"space.pp", &o->pp},
                               {"space.vpp", &o->vpp}, {"space.ep", &o->ep}, {"space.etp", &o->etp},
                               {"space.micro_batch_size", &o->micro_batch_size},
                               {"space.redundant_experts_per_rank", &o->redundant_experts}}) {
    add_plan_field_option(sub, path, *target, "a list N1,N2,...");
  }
  add_plan_field_option(sub, "space.recompute", o->recompute,
                        "none, selective, full, selective:MODULE+MODULE (MODULE: " + join(names_of(kRecomputeModuleNames)) +
                            ")");
  add_plan_field_option(sub, "space.precision", o->precision,
                        "a list (" + join(names_of(kPrecisionNames)) + ") or all (every one the GPU has but fp16)");
  add_plan_field_option(sub, "space.dispatcher", o->dispatcher, "a list of " + join(names_of(kDispatcherNames)));
  add_field_option(sub, "moe.host_sync_idle_s", o->host_sync_idle_s);  // default: the scenario's
  add_plan_field_option(sub, "objective", o->objective);
  add_plan_field_option(sub, "token_budget", o->token_budget);
  add_plan_field_option(sub, "top", o->top);
  add_plan_field_option(sub, "finalists", o->finalists);
  add_plan_field_option(sub, "memory_headroom_gib", o->memory_headroom_gib);
  sub->add_flag("--no-skew", o->no_skew, "skip the routing-skew sensitivity of the top 3");
  sub->add_option("--threads", o->threads, "worker threads (default: every core)")->check(CLI::Range(0, 1024));
  sub->add_option("--shard", o->shard,
                  "evaluate only shard i of N (i/N) and write the partial search to --json, checkpointing progress "
                  "to JSON.checkpoint");
  sub->add_flag("--resume", o->resume, "continue a stopped --shard sweep from its JSON.checkpoint");
  sub->add_option("--checkpoint-every", o->checkpoint_every_s, "seconds between a --shard sweep's checkpoints")
      ->capture_default_str()
      ->check(finite_range(0.0, 86400.0));
  sub->add_option("--json", o->json_out, "write the plan (moesim.plan/1), or with --shard the partial search");
  sub->add_option("--html", o->html_out, "write a self-contained HTML report of the plan");
  sub->add_flag("-q,--quiet", o->quiet, "print nothing but errors");
  sub->add_option("--emit", o->emit,
                  "print the winner as Megatron-LM arguments (megatron) or Megatron-Bridge recipe overrides (bridge) "
                  "instead of the table")
      ->check(CLI::IsMember({"megatron", "bridge"}));
  sub->callback([o, &commands] {
    commands.set([o] {
      // Every output is checked before the search, and a build without ECharts cannot write the
      // report: both are said before a long search, not after.
      OutputBatch outputs;
      outputs.expect("--json", o->json_out);
      outputs.expect("--html", o->html_out);
      if (!o->html_out.empty()) report::require_html_support();
      const PlanRequest req = build_request(*o);
      // Ctrl-C or SIGTERM: stop between blocks of candidates, save, show the best so far, exit 128+signal.
      const StopOnSignal stop_on_signal;
      const auto progress = std::make_shared<ProgressLine>(!o->quiet);
      planner::SearchOptions so;
      so.threads = o->threads;
      so.progress = progress_of(progress);
      so.stop_requested = [] { return stop_requested(); };
      if (!o->shard.empty()) {
        parse_shard(o->shard, so.shard, so.shards);
        if (o->json_out.empty()) throw InputError("--json", "", "--shard writes a partial search and needs --json FILE", "--json FILE");
        if (o->json_out == kStdStream) throw InputError("--json", o->json_out, "a shard keeps a checkpoint beside its file", "--json FILE");
        if (!o->html_out.empty()) throw InputError("--html", o->html_out, "a shard has no report; merge the shards first", "moesim merge");
        if (!o->emit.empty()) throw InputError("--emit", o->emit, "a shard has no winner; merge the shards first", "moesim merge");
        return run_shard(req, so, *o, *progress);
      }
      if (o->resume) {
        throw InputError("--resume", "", "only a --shard sweep keeps checkpoints to resume from",
                         "moesim plan ... --shard i/N --json FILE --resume");
      }
      const planner::SearchRun run = planner::run_search(req, so);
      if (!run.complete()) {
        progress->clear();
        return report_stop(req, run.evaluation, run.total, *o, "nothing was written");
      }
      planner::PlanOptions po;
      po.threads = o->threads;
      po.stop_requested = so.stop_requested;
      po.progress = so.progress;
      try {
        const Plan plan = planner::finish_plan(req, {run.evaluation}, po);
        progress->clear();
        write_outputs(plan, *o, outputs);
      } catch (const StoppedError&) {
        progress->clear();
        return report_stop(req, run.evaluation, run.total, *o, "stopped while simulating the finalists; nothing was written");
      }
      return 0;
    });
  });

  auto m = std::make_shared<PlanCliOptions>();
  auto shards = std::make_shared<std::vector<std::string>>();
  auto* merge = app.add_subcommand("merge", "Join the shards of a plan (moesim plan --shard i/N --json FILE) into the plan.");
  merge->add_option("shards", *shards, "the shard files, 0/N … N-1/N")->required();
  merge->add_option("--json", m->json_out, "write the plan (moesim.plan/1)");
  merge->add_option("--html", m->html_out, "write a self-contained HTML report of the plan");
  merge->add_option("--threads", m->threads, "worker threads (default: every core)")->check(CLI::Range(0, 1024));
  merge->add_flag("-q,--quiet", m->quiet, "print nothing but errors");
  merge->callback([m, shards, &commands] {
    commands.set([m, shards] {
      OutputBatch outputs;
      outputs.expect("--json", m->json_out);
      outputs.expect("--html", m->html_out);
      if (!m->html_out.empty()) report::require_html_support();
      std::vector<SearchEvaluation> parts;
      PlanRequest req;
      std::string first_request_text;
      for (const auto& file : *shards) {
        config::PlanShard s = config::load_plan_shard(file);
        // Every shard must answer the same question: compare the requests as written.
        const std::string text = report::plan_request_to_json_text(s.request);
        if (parts.empty()) {
          req = s.request;
          first_request_text = text;
        } else if (text != first_request_text) {
          throw InputError("/request", "", "this shard answers a different plan request than " + shards->front(),
                           "shards of one `moesim plan ... --shard i/N` command")
              .in_file(file);
        }
        parts.push_back(std::move(s.evaluation));
      }
      planner::PlanOptions po;
      po.threads = m->threads;
      write_outputs(planner::finish_plan(req, parts, po), *m, outputs);
      return 0;
    });
  });
}

}  // namespace moesim::cli
