#include "core/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace moesim {
namespace {

// Written by the handler, read by the work on any thread: a lock-free atomic is both signal-safe and
// free of data races (volatile sig_atomic_t would be the first only).
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
struct sigaction g_previous_int {}, g_previous_term {};

extern "C" void on_stop_signal(int signo) {
  if (g_signal.load() != 0) {
    // The second signal: the user means it. Default action, raised again.
    std::signal(signo, SIG_DFL);
    std::raise(signo);
    return;
  }
  g_signal.store(signo);
}

}  // namespace

StopOnSignal::StopOnSignal() {
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a write interrupted by the first signal goes on
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopOnSignal::~StopOnSignal() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool stop_requested() { return g_signal.load() != 0; }

int stop_signal() { return g_signal.load(); }

int stop_exit_code() { return g_signal.load() != 0 ? 128 + g_signal.load() : 0; }

}  // namespace moesim
