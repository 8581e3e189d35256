// Issue 11 must-show 3: a `moesim plan --shard` sweep killed mid-run (SIGKILL: no chance to clean up)
// leaves no partial output, and `--resume` finishes it with a result byte-identical to a run that was
// never interrupted. SIGINT stops it gracefully: exit 130, the best layouts so far, progress saved.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <csignal>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "../run_command.hpp"
#include "../test_paths.hpp"

namespace fs = std::filesystem;
using namespace moesim;

namespace {

// ~6,000 candidates: a few seconds, long enough to be stopped after its first checkpoint.
const std::vector<std::string> kQuestion{"plan", "--model", "mixtral-8x7b", "--system", "hgx-h100", "--gpus", "64", "--seq",
                                         "4096", "--global-batch", "256", "--micro-batch", "1,2", "--shard", "0/1", "-q"};

fs::path fresh_dir(const std::string& name) {
  const fs::path d = test::binary_dir() / ("plan-kill-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

struct Running {
  pid_t pid = -1;
  fs::path out;  ///< captured stdout
};

// Starts moesim in `dir` with stdout to a file; returns at once.
Running start(const fs::path& dir, std::vector<std::string> args) {
  Running r;
  r.out = dir.parent_path() / (dir.filename().string() + ".stdout");
  // Unwritten output of this process would otherwise be written twice, once by the child.
  std::fflush(stdout);
  std::fflush(stderr);
  r.pid = ::fork();
  REQUIRE(r.pid >= 0);
  if (r.pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    if (!std::freopen(r.out.c_str(), "w", stdout)) ::_exit(127);
    std::string binary = test::moesim_binary();
    std::vector<char*> argv{binary.data()};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return r;
}

// Waits until `file` exists (the first checkpoint); false after 120 s or when the process ended first.
bool wait_for(const fs::path& file, pid_t pid) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < until) {
    if (fs::exists(file)) return true;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

int wait_exit(pid_t pid, bool& signalled, int& signo) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  signalled = WIFSIGNALED(status);
  signo = signalled ? WTERMSIG(status) : 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string uninterrupted_result() {
  const fs::path dir = fresh_dir("whole");
  const Running r = start(dir, with(kQuestion, {"--json", "whole.json"}));
  bool sig = false;
  int signo = 0;
  REQUIRE(wait_exit(r.pid, sig, signo) == 0);
  CHECK(listing(dir) == std::set<std::string>{"whole.json"});  // the checkpoint goes with success
  return test::slurp((dir / "whole.json").string());
}

}  // namespace

TEST_CASE("issue 11 must-show 3: a sweep killed with SIGKILL leaves no partial file and --resume finishes it identically") {
  const std::string expected = uninterrupted_result();
  REQUIRE_FALSE(expected.empty());

  const fs::path dir = fresh_dir("killed");
  const auto args = with(kQuestion, {"--json", "shard.json", "--checkpoint-every", "0", "--threads", "1"});
  const Running r = start(dir, args);
  REQUIRE_MESSAGE(wait_for(dir / "shard.json.checkpoint", r.pid), "the sweep ended before its first checkpoint");
  ::kill(r.pid, SIGKILL);
  bool sig = false;
  int signo = 0;
  wait_exit(r.pid, sig, signo);
  CHECK(sig);
  CHECK(signo == SIGKILL);
  // `ls` after the kill: the checkpoint, nothing else — no shard.json, no temporary file.
  CHECK(listing(dir) == std::set<std::string>{"shard.json.checkpoint"});

  const auto resumed = test::run_command(test::moesim_binary() + " " + [&] {
    std::string s;
    for (const auto& a : with(kQuestion, {"--json", "shard.json", "--resume"})) s += "'" + a + "' ";
    return s;
  }(), dir.string());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(listing(dir) == std::set<std::string>{"shard.json"});
  CHECK(test::slurp((dir / "shard.json").string()) == expected);
}

TEST_CASE("SIGINT stops a sweep: exit 130, the best layouts so far on stdout, progress saved; --resume finishes it") {
  const std::string expected = uninterrupted_result();
  const fs::path dir = fresh_dir("interrupted");
  const Running r = start(dir, with(kQuestion, {"--json", "shard.json", "--checkpoint-every", "0", "--threads", "1"}));
  REQUIRE_MESSAGE(wait_for(dir / "shard.json.checkpoint", r.pid), "the sweep ended before its first checkpoint");
  ::kill(r.pid, SIGINT);
  bool sig = false;
  int signo = 0;
  CHECK(wait_exit(r.pid, sig, signo) == 130);
  const std::string out = test::slurp(r.out.string());
  CHECK(out.find("best layouts of the ") != std::string::npos);
  CHECK(out.find("rank") != std::string::npos);
  CHECK(listing(dir) == std::set<std::string>{"shard.json.checkpoint"});

  std::string cmd = test::moesim_binary();
  for (const auto& a : with(kQuestion, {"--json", "shard.json", "--resume"})) cmd += " '" + a + "'";
  const auto resumed = test::run_command(cmd, dir.string());
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(test::slurp((dir / "shard.json").string()) == expected);
}

TEST_CASE("--resume refuses a missing checkpoint, another question's checkpoint and a plain plan, each with exit 2") {
  const fs::path dir = fresh_dir("refusals");
  std::string base = test::moesim_binary();
  for (const auto& a : kQuestion) base += " '" + a + "'";
  const auto missing = test::run_command(base + " --json s.json --resume", dir.string());
  CHECK(missing.exit_code == 2);
  CHECK(missing.err ==
        "moesim: error: at --resume: value s.json.checkpoint: no checkpoint to resume from (a sweep that finished removes "
        "it); allowed: the same command without --resume\n");

  // A checkpoint saved by a stopped run of another question.
  auto other_question = kQuestion;
  other_question[8] = "2048";  // --seq
  const Running r = start(dir, with(other_question, {"--json", "s.json", "--checkpoint-every", "0", "--threads", "1"}));
  REQUIRE(wait_for(dir / "s.json.checkpoint", r.pid));
  ::kill(r.pid, SIGKILL);
  bool sig = false;
  int signo = 0;
  wait_exit(r.pid, sig, signo);
  const auto other = test::run_command(base + " --json s.json --resume", dir.string());
  CHECK(other.exit_code == 2);
  CHECK(other.err ==
        "moesim: error: s.json.checkpoint: at /request: the checkpoint answers a different plan request than this command; "
        "allowed: the same moesim plan command as the stopped run\n");

  const auto plain = test::run_command(test::moesim_binary() + " plan plan-mixtral-8x7b-h100-64 --resume", dir.string());
  CHECK(plain.exit_code == 2);
  CHECK(plain.err.find("only a --shard sweep keeps checkpoints to resume from") != std::string::npos);
}
