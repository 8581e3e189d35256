#pragma once
// Graceful stop of a long command on SIGINT (Ctrl-C) or SIGTERM (Slurm's time limit, `kill`): while a
// StopOnSignal lives, the first such signal only sets a flag that the work polls between steps, so
// the command can save its progress and report what it found so far; a second signal ends the process
// at once, as if no handler were installed. Outputs are written atomically (core/file_io), so even
// then no partial file appears.
namespace moesim {

class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();  ///< restores the previous handlers
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
};

/// Whether a stop was requested since the StopOnSignal was installed.
[[nodiscard]] bool stop_requested();
/// The signal that requested it (SIGINT, SIGTERM), 0 when none.
[[nodiscard]] int stop_signal();
/// The conventional exit status of a process stopped by that signal: 128 + its number (130 for SIGINT).
[[nodiscard]] int stop_exit_code();

}  // namespace moesim
