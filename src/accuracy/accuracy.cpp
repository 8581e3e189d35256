#include "accuracy/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.hpp"
#include "model/counts.hpp"
#include "predict/predict.hpp"

namespace moesim::accuracy {

std::string_view to_string(Metric m) { return name_of(kMetricNames, m); }

namespace {

double published_flops_per_step(const PublishedPoint& p) {
  const Scenario& s = p.scenario;
  const auto& m = s.model;
  switch (p.flops) {
    case PublishedFlops::kNarayanan2021: {
      // Narayanan et al. 2021, eq. (3): 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)).
      const double B = static_cast<double>(s.training.global_batch_size);
      const double seq = static_cast<double>(s.training.seq_length);
      const double l = static_cast<double>(m.num_layers);
      const double h = static_cast<double>(m.hidden_size);
      const double V = static_cast<double>(m.vocab_size);
      return 96.0 * B * seq * l * h * h * (1.0 + seq / (6.0 * h) + V / (16.0 * l * h));
    }
    case PublishedFlops::kMegatronFullS2:
      return model::model_flops_per_step(m, s.training.seq_length, s.training.global_batch_size,
                                         model::FlopsConvention::kFullS2);
    case PublishedFlops::kMegatronCausal:
      return model::model_flops_per_step(m, s.training.seq_length, s.training.global_batch_size,
                                         model::FlopsConvention::kMegatron);
  }
  return 0;
}

}  // namespace

double metric_from_result(const PublishedPoint& p, const Result& r) {
  const double gpus = static_cast<double>(p.scenario.system.gpus);
  switch (p.metric) {
    case Metric::kTokensPerSecondPerGpu: return r.tokens_per_s_per_gpu;
    case Metric::kStepTimeSeconds: return r.step_time_s;
    case Metric::kTflopsPerGpu: return published_flops_per_step(p) / r.step_time_s / gpus / 1e12;
    case Metric::kMfu: {
      const double peak = p.scenario.system.gpu.peak(p.scenario.precision).value_or(FlopsPerSecond(1)).value();
      return published_flops_per_step(p) / r.step_time_s / gpus / peak;
    }
  }
  return 0;
}

namespace {
std::vector<GroupSummary> summarise(const std::vector<PointOutcome>& outcomes, bool by_subgroup) {
  std::map<std::string, GroupSummary> acc;
  for (const auto& o : outcomes) {
    if (!o.failure.empty()) continue;
    const std::string key = by_subgroup ? o.point->group + "/" + o.point->subgroup : o.point->group;
    GroupSummary& g = acc[key];
    g.group = key;
    ++g.points;
    g.mape += std::abs(o.error);
    g.bias += o.speed_error;
    g.max_abs_error = std::max(g.max_abs_error, std::abs(o.error));
  }
  std::vector<GroupSummary> out;
  for (auto& [key, g] : acc) {
    g.mape /= g.points;
    g.bias /= g.points;
    out.push_back(g);
  }
  return out;
}
}  // namespace

PointOutcome predict_point(const PublishedPoint& p, Fidelity fidelity) {
  PointOutcome o;
  o.point = &p;
  try {
    const Result r = predict::predict(p.scenario, fidelity).result;
    o.step_time_s = r.step_time_s;
    o.memory_peak_bytes = r.memory.peak_bytes;
    o.memory_capacity_bytes = r.memory.capacity_bytes;
    o.memory_fits = r.memory.fits;
    o.predicted = metric_from_result(p, r);
    o.error = (o.predicted - p.value) / p.value;
    o.speed_error = p.metric == Metric::kStepTimeSeconds ? p.value / o.predicted - 1.0 : o.error;
  } catch (const InputError& e) {
    o.failure = e.what();
  }
  return o;
}

AccuracyReport report_of(std::vector<PointOutcome> outcomes, std::vector<const PublishedPoint*> skipped) {
  AccuracyReport rep;
  rep.outcomes = std::move(outcomes);
  rep.skipped = std::move(skipped);
  double sum = 0, bias_sum = 0;
  int n = 0;
  for (const PointOutcome& o : rep.outcomes) {
    if (!o.failure.empty()) continue;
    sum += std::abs(o.error);
    bias_sum += o.speed_error;
    ++n;
  }
  rep.groups = summarise(rep.outcomes, false);
  rep.subgroups = summarise(rep.outcomes, true);
  rep.overall_mape = n ? sum / n : 0.0;
  rep.overall_bias = n ? bias_sum / n : 0.0;
  return rep;
}

AccuracyReport run_accuracy(const std::vector<PublishedPoint>& points, const std::string& only_group,
                            Fidelity fidelity) {
  std::vector<PointOutcome> outcomes;
  std::vector<const PublishedPoint*> skipped;
  for (const auto& p : points) {
    if (!only_group.empty() && p.group != only_group) continue;
    if (!p.skip_reason.empty()) {
      skipped.push_back(&p);
      continue;
    }
    outcomes.push_back(predict_point(p, fidelity));
  }
  return report_of(std::move(outcomes), std::move(skipped));
}

}  // namespace moesim::accuracy
