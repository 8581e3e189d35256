#include "cli/progress_line.hpp"

#include <cmath>
#include <cstdio>

#include <unistd.h>

#include <fmt/format.h>

namespace moesim::cli {
namespace {

// Four redraws a second read as live and cost nothing, where one per block of work flooded a log
// (218 KB of carriage returns in 12 s of planning).
constexpr std::chrono::milliseconds kRedrawEvery{250};

std::string compact(double v) {
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.1f}k", v / 1e3);
  if (v >= 10 || v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.2g}", v);  // a slow rate: 0.033 simulations a second
}

std::string duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::floor(std::fmod(s, 3600) / 60));
}

}  // namespace

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() { clear(); }

std::string ProgressLine::format(std::string_view phase, double done, double total, std::string_view unit,
                                 double elapsed_s) {
  const double fraction = total > 0 ? std::min(1.0, done / total) : 0.0;
  std::string line = fmt::format("{} {:5.1f}% {}/{} {}", phase, 100 * fraction, compact(done), compact(total), unit);
  if (elapsed_s > 0 && done > 0) {
    const double rate = done / elapsed_s;
    line += fmt::format(" {}/s ETA {}", compact(rate), duration((total - done) / rate));
  }
  return line;
}

void ProgressLine::update(std::string_view phase, double done, double total, std::string_view unit) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  const bool new_phase = phase != phase_;
  if (new_phase) {
    phase_ = std::string(phase);
    phase_start_ = now;
  } else if (now - last_draw_ < kRedrawEvery && done < total) {
    return;
  }
  last_draw_ = now;
  const std::chrono::duration<double> elapsed = now - phase_start_;
  std::fprintf(stderr, "\r\033[K%s", format(phase, done, total, unit, elapsed.count()).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace moesim::cli
