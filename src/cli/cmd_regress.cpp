// `moesim regress --baselines DIR [--suite DIR] [--update] [--tolerance 2%]`: runs the fixed suite
// (regress/suite.cpp), compares step time, throughput and peak memory with the checked-in baselines,
// prints the drifts and exits 1 beyond the tolerance; --update rewrites the baselines and says what
// changed. .ci/run runs it, so a change that moves predictions updates the baselines visibly.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "config/baseline_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "regress/drift.hpp"
#include "regress/suite.hpp"
#include "report/baseline_json.hpp"

namespace moesim::cli {
namespace {

namespace fs = std::filesystem;

using regress::Drift;

int update(const std::vector<Drift>& drifts, const fs::path& dir) {
  fs::create_directories(dir);
  int changed = 0;
  for (const auto& d : drifts) {
    const fs::path file = dir / (d.id + ".json");
    if (!d.now) {
      fs::remove(file);
      std::fputs(fmt::format("removed   {} (no longer in the suite)\n", d.id).c_str(), stdout);
      ++changed;
      continue;
    }
    if (regress::unchanged(d)) continue;
    write_file_atomically(file, report::baseline_to_json_text(*d.now));
    ++changed;
    if (!d.baseline) {
      std::fputs(fmt::format("new       {}: step {:.4f} s, {:.0f} tokens/s, peak {:.2f} GiB\n", d.id, d.now->step_time_s,
                             d.now->tokens_per_s, d.now->peak_bytes / (1024.0 * 1024 * 1024)).c_str(), stdout);
    } else {
      std::fputs(fmt::format("updated   {}: step {:.4f} → {:.4f} s ({:+.2f}%), tokens/s {:+.2f}%, peak memory {:+.2f}%\n", d.id,
                             d.baseline->step_time_s, d.now->step_time_s, 100 * d.step, 100 * d.tokens, 100 * d.peak).c_str(), stdout);
    }
  }
  std::fputs(fmt::format("{} of {} baselines changed in {}\n", changed, drifts.size(), dir.string()).c_str(), stdout);
  return 0;
}

}  // namespace

void register_regress(CLI::App& app, Commands& commands) {
  struct Options {
    std::string baselines = "reports/baselines", suite, tolerance = "2%";
    bool update = false;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("regress", "Compare the fixed scenario suite's predictions with checked-in baselines (CI guard).");
  sub->add_option("--baselines", opt->baselines, "folder of moesim.baseline/1 files, one per suite point")->capture_default_str();
  sub->add_option("--suite", opt->suite, "folder of the suite's scenario files (default: BASELINES/../regress)");
  sub->add_option("--tolerance", opt->tolerance, "largest relative drift allowed, e.g. 2% or 0.02")->capture_default_str();
  sub->add_flag("--update", opt->update, "rewrite the baselines from this run and print what changed");
  sub->callback([opt, &commands] {
    commands.set([opt] {
      const double tolerance = regress::parse_tolerance(opt->tolerance);
      const fs::path dir = opt->baselines;
      const fs::path suite_dir = opt->suite.empty() ? dir.parent_path().empty() ? fs::path("regress") : dir.parent_path() / "regress"
                                                    : fs::path(opt->suite);
      // The folders first, by the options that name them (not by a file inside them).
      if (!opt->update && !fs::is_directory(dir)) {
        throw InputError("--baselines", dir.string(), fs::exists(dir) ? "is not a folder" : "no such folder",
                         "a folder of moesim.baseline/1 files, e.g. reports/baselines");
      }
      if (!fs::is_directory(suite_dir)) {
        throw InputError(opt->suite.empty() ? "--baselines" : "--suite", suite_dir.string(),
                         opt->suite.empty() ? "the suite's folder BASELINES/../regress does not exist" : "no such folder",
                         "a folder of the suite's scenario files, e.g. reports/regress");
      }
      // Read the baselines first: a malformed file fails before minutes of simulation.
      const std::vector<RegressionPoint> baselines = opt->update ? std::vector<RegressionPoint>{} : config::load_baselines(dir);
      const std::vector<RegressionPoint> now = regress::run_suite(suite_dir);
      if (opt->update) {
        std::vector<RegressionPoint> old;
        try {
          old = config::load_baselines(dir);
        } catch (const InputError&) {
          // Unreadable baselines are rewritten from scratch.
        }
        return update(regress::compare(old, now, tolerance), dir);
      }
      const auto drifts = regress::compare(baselines, now, tolerance);
      std::fputs(regress::drift_table(drifts, tolerance).c_str(), stdout);
      const auto bad = std::count_if(drifts.begin(), drifts.end(), [](const Drift& d) { return !d.ok; });
      if (bad > 0) {
        std::fputs(fmt::format("moesim regress: {} of {} points drifted beyond {}; if the change is intended, run `moesim regress "
                               "--baselines {} --update` and commit the baselines with it\n",
                               bad, drifts.size(), opt->tolerance, dir.string()).c_str(), stdout);
        return 1;
      }
      std::fputs(fmt::format("moesim regress: all {} points within {}\n", drifts.size(), opt->tolerance).c_str(), stdout);
      return 0;
    });
  });
}

}  // namespace moesim::cli
