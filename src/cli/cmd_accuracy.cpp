// `moesim accuracy [--data FILE] [--group G] [--fidelity simulation|estimate] [--verbose]`: predicted vs published per point and MAPE per group.
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "accuracy/accuracy.hpp"
#include "cli/commands.hpp"
#include "config/published_loader.hpp"

namespace moesim::cli {

void register_accuracy(CLI::App& app, Commands& commands) {
  struct Options {
    std::string data = MOESIM_DEFAULT_VALIDATION_FILE;
    std::string group;
    std::string fidelity = "simulation";
    bool verbose = false;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("accuracy", "Compare predictions with published end-to-end training measurements.");
  sub->add_option("--data", opt->data, "validation file of published measurements")->capture_default_str();
  sub->add_option("--group", opt->group, "only this source group (e.g. narayanan2021, mcore-weak-scaling, megatron-bridge)");
  sub->add_option("--fidelity", opt->fidelity, "simulation (event simulation, the default) or estimate (closed form)")
      ->check(CLI::IsMember({"estimate", "simulation"}));
  sub->add_flag("-v,--verbose", opt->verbose, "also list skipped points and the assumptions made per point");
  sub->callback([opt, &commands] {
    commands.set([opt] {
      const auto points = config::load_published_points(opt->data);
      const auto fidelity =
          opt->fidelity == "estimate" ? accuracy::Fidelity::kEstimate : accuracy::Fidelity::kSimulation;
      const auto rep = accuracy::run_accuracy(points, opt->group, fidelity);
      std::printf("fidelity %s\n", opt->fidelity.c_str());
      std::printf("%-64s %-20s %12s %12s %8s\n", "point", "metric", "published", "predicted", "error");
      for (const auto& o : rep.outcomes) {
        if (!o.failure.empty()) {
          std::printf("%-64s failed: %s\n", o.point->id.c_str(), o.failure.c_str());
          continue;
        }
        std::printf("%-64s %-20s %12.4g %12.4g %+7.1f%%\n", o.point->id.c_str(),
                    std::string(accuracy::to_string(o.point->metric)).c_str(), o.point->value, o.predicted, 100.0 * o.error);
        if (opt->verbose) {
          for (const auto& a : o.point->assumed) std::printf("    assumed: %s\n", a.c_str());
        }
      }
      if (opt->verbose) {
        for (const auto* p : rep.skipped) std::printf("skipped %s: %s\n", p->id.c_str(), p->skip_reason.c_str());
      }
      std::printf("\n%-44s %7s %8s %10s\n", "group", "points", "MAPE", "max |err|");
      for (const auto& g : rep.groups) {
        std::printf("%-44s %7d %7.1f%% %9.1f%%\n", g.group.c_str(), g.points, 100.0 * g.mape, 100.0 * g.max_abs_error);
      }
      std::printf("\nsubgroup\n");
      for (const auto& g : rep.subgroups) {
        std::printf("  %-60s %5d %7.1f%% %9.1f%%\n", g.group.c_str(), g.points, 100.0 * g.mape, 100.0 * g.max_abs_error);
      }
      std::printf("\n%zu points run, %zu skipped (--verbose lists why); overall MAPE %.1f%%\n", rep.outcomes.size(),
                  rep.skipped.size(), 100.0 * rep.overall_mape);
      return 0;
    });
  });
}

}  // namespace moesim::cli
