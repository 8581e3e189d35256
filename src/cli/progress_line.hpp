#pragma once
// Progress of long work on stderr — phase, percent, count, rate and ETA on one redrawn line — only
// when stderr is a terminal (logs and pipes get nothing), and at most a few redraws a second however
// often the work reports (the planner reports every block of 256 candidates).
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace moesim::cli {

class ProgressLine {
 public:
  /// Draws only when `enabled` and stderr is a terminal.
  explicit ProgressLine(bool enabled);
  ~ProgressLine();  ///< clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// `done` of `total` `unit` in `phase`; a new phase restarts the rate and the ETA.
  void update(std::string_view phase, double done, double total, std::string_view unit);
  /// Clears the line (before the command prints its answer).
  void clear();

  /// The line drawn for these figures (tests): "searching  42.0% 46,267/110,160 candidates 13.2k/s ETA 5s".
  [[nodiscard]] static std::string format(std::string_view phase, double done, double total, std::string_view unit,
                                          double elapsed_s);

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_ = false;
  bool drawn_ = false;
  std::string phase_;
  Clock::time_point phase_start_{};
  Clock::time_point last_draw_{};
};

}  // namespace moesim::cli
