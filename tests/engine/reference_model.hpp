#pragma once
// An independent, deliberately naive model of max-min sharing for the engine tests: textbook
// progressive filling (raise every unfrozen rate together until a link fills) re-solved from
// scratch at every event, in continuous time. Slow and obviously right; nothing shared with
// src/engine.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace moesim::engine::test {

inline std::vector<double> reference_max_min(const std::vector<double>& capacity,
                                             const std::vector<std::vector<int>>& paths) {
  const std::size_t n = paths.size();
  std::vector<double> rate(n, 0);
  std::vector<bool> frozen(n, false);
  std::vector<double> spare = capacity;
  std::size_t left = n;
  while (left > 0) {
    double step = INFINITY;
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      int users = 0;
      for (std::size_t f = 0; f < n; ++f) {
        if (!frozen[f] && std::count(paths[f].begin(), paths[f].end(), static_cast<int>(l))) ++users;
      }
      if (users > 0) step = std::min(step, spare[l] / users);
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (frozen[f]) continue;
      rate[f] += step;
      for (int l : paths[f]) spare[l] -= step;
    }
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      if (spare[l] > 1e-9 * capacity[l]) continue;
      for (std::size_t f = 0; f < n; ++f) {
        if (!frozen[f] && std::count(paths[f].begin(), paths[f].end(), static_cast<int>(l))) {
          frozen[f] = true;
          --left;
        }
      }
    }
  }
  return rate;
}


struct ReferenceFlow {
  std::vector<int> path;
  double bytes = 0;
  double active_ps = 0;  ///< start + latency
};

/// Completion time (ps, unrounded) of every flow.
inline std::vector<double> reference_completions(const std::vector<double>& capacity,
                                                 const std::vector<ReferenceFlow>& flows) {
  const std::size_t n = flows.size();
  std::vector<double> done(n, -1), left(n);
  for (std::size_t f = 0; f < n; ++f) left[f] = flows[f].bytes;
  std::vector<std::size_t> active;
  double t = 0;
  std::size_t finished = 0;
  while (finished < n) {
    double next_start = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < n; ++f) {
      const bool started = flows[f].active_ps <= t;
      const bool is_active = std::find(active.begin(), active.end(), f) != active.end();
      if (done[f] >= 0 || is_active) continue;
      if (started) {
        if (flows[f].path.empty()) {
          done[f] = flows[f].active_ps;
          ++finished;
        } else {
          active.push_back(f);
        }
      } else {
        next_start = std::min(next_start, flows[f].active_ps);
      }
    }
    if (active.empty()) {
      if (finished == n) break;
      t = next_start;
      continue;
    }
    std::vector<std::vector<int>> paths;
    for (std::size_t f : active) paths.push_back(flows[f].path);
    const auto rate = reference_max_min(capacity, paths);
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < active.size(); ++i) dt = std::min(dt, left[active[i]] / rate[i] * 1e12);
    const bool start_first = next_start - t < dt;
    if (start_first) dt = next_start - t;
    std::vector<std::size_t> still;
    for (std::size_t i = 0; i < active.size(); ++i) {
      const std::size_t f = active[i];
      left[f] -= rate[i] * dt * 1e-12;
      if (!start_first && left[f] <= 1e-9 * flows[f].bytes) {
        done[f] = t + dt;
        ++finished;
      } else {
        still.push_back(f);
      }
    }
    active = still;
    t = start_first ? next_start : t + dt;
  }
  return done;
}

}  // namespace moesim::engine::test
