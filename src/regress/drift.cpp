#include "regress/drift.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"

namespace moesim::regress {

std::vector<Drift> compare(const std::vector<RegressionPoint>& baselines, const std::vector<RegressionPoint>& now, double tolerance) {
  std::map<std::string, Drift> by_id;
  for (const auto& b : baselines) by_id[b.id].baseline = b;
  for (const auto& n : now) by_id[n.id].now = n;
  auto rel = [](double a, double b) { return b == 0 ? (a == 0 ? 0.0 : INFINITY) : (a - b) / b; };
  std::vector<Drift> out;
  // Suite order first (as run), then baselines that left the suite.
  for (const auto& n : now) {
    Drift d = by_id[n.id];
    d.id = n.id;
    if (d.baseline) {
      d.step = rel(n.step_time_s, d.baseline->step_time_s);
      d.tokens = rel(n.tokens_per_s, d.baseline->tokens_per_s);
      d.peak = rel(n.peak_bytes, d.baseline->peak_bytes);
      d.ok = std::abs(d.step) <= tolerance && std::abs(d.tokens) <= tolerance && std::abs(d.peak) <= tolerance &&
             d.baseline->scenario == n.scenario;
    }
    out.push_back(d);
  }
  for (auto& [id, d] : by_id) {
    if (!d.now) {
      d.id = id;
      out.push_back(d);
    }
  }
  return out;
}

bool unchanged(const Drift& d) {
  return d.baseline && d.now && d.baseline->step_time_s == d.now->step_time_s && d.baseline->tokens_per_s == d.now->tokens_per_s &&
         d.baseline->peak_bytes == d.now->peak_bytes && d.baseline->scenario == d.now->scenario;
}

std::string drift_table(const std::vector<Drift>& drifts, double tolerance) {
  // Drifts are (now − baseline) / baseline of the step time, the throughput and the peak memory.
  std::string t = fmt::format("{:<40} {:>10} {:>10} {:>9} {:>9} {:>9}  {}\n", "point", "step s", "baseline s", "Δ step", "Δ tok/s",
                              "Δ memory", "verdict");
  auto pct = [&](double x) { return std::isfinite(x) ? fmt::format("{:+.2f}%", 100.0 * x) : std::string("inf"); };
  for (const auto& d : drifts) {
    if (!d.baseline) {
      t += fmt::format("{:<40} {:>10.4f} {:>10} {:>9} {:>9} {:>9}  {}\n", d.id, d.now->step_time_s, "-", "-", "-", "-",
                       "NO BASELINE (moesim regress --update writes it)");
    } else if (!d.now) {
      t += fmt::format("{:<40} {:>10} {:>10.4f} {:>9} {:>9} {:>9}  {}\n", d.id, "-", d.baseline->step_time_s, "-", "-", "-",
                       "NOT IN SUITE (--update removes the file)");
    } else {
      const bool moved = d.baseline->scenario != d.now->scenario;
      t += fmt::format("{:<40} {:>10.4f} {:>10.4f} {:>9} {:>9} {:>9}  {}\n", d.id, d.now->step_time_s, d.baseline->step_time_s,
                       pct(d.step), pct(d.tokens), pct(d.peak),
                       d.ok ? "ok" : moved ? "SCENARIO CHANGED" : fmt::format("DRIFT > {:.2f}%", 100.0 * tolerance));
    }
  }
  return t;
}

double parse_tolerance(const std::string& text) {
  std::string s = text;
  const bool percent = !s.empty() && s.back() == '%';
  if (percent) s.pop_back();
  std::size_t used = 0;
  double x = -1;
  try {
    x = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty() || !(x >= 0) || !std::isfinite(x)) {
    throw InputError("--tolerance", text, "a relative tolerance", "a percentage such as 2% or a fraction such as 0.02");
  }
  return percent ? x / 100.0 : x;
}

}  // namespace moesim::regress
