// Issue 33: each finding of the hostile-input review, as the command a new user typed, with the exact
// message and exit code it must now give — and, for the file-system findings, what is left on disk.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../run_command.hpp"
#include "../test_paths.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {

std::string bin() { return test::moesim_binary(); }
std::string root() { return test::source_dir().string(); }

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

fs::path fresh(const std::string& name) {
  const fs::path d = test::binary_dir() / ("hostile-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

void write(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}

// The small MoE scenario every output test simulates (a second or less).
const std::string kScenario = "mixtral-8x7b-h100-64";

}  // namespace

TEST_CASE("100,000 nested brackets are refused at depth 64 by every loader, not a stack overflow (exit 2)") {
  const fs::path dir = fresh("deep");
  const int depth = 100000;
  write(dir / "deep.json", "{\"model\": " + std::string(depth, '[') + std::string(depth, ']') + "}");
  std::string path = "/model";
  for (int i = 0; i < 63; ++i) path += "/0";
  const std::string expected =
      "moesim: error: deep.json: at " + path + ": nesting deeper than 64 levels; allowed: at most 64 nested arrays and objects";
  for (const std::string& command :
       std::vector<std::string>{bin() + " simulate deep.json", bin() + " models import deep.json", bin() + " merge deep.json",
                                bin() + " topo validate deep.json", bin() + " report deep.json -o page.html"}) {
    CAPTURE(command);
    const auto r = test::run_command(command, dir.string());
    CHECK(r.exit_code == 2);
    CHECK(trim(r.err) == expected);
  }
  CHECK(listing(dir) == std::set<std::string>{"deep.json"});
}

TEST_CASE("an output that is a device, a FIFO, a symbolic link or a folder is refused before any work (exit 2)") {
  const fs::path dir = fresh("special");
  const std::string allowed = "; allowed: a new file or a regular file in an existing, writable folder, or - for standard output";
  // /dev/full: as root the old atomic rename replaced the device node with a regular file.
  auto r = test::run_command(bin() + " simulate " + kScenario + " --trace /dev/full", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --trace: value /dev/full: is not a regular file (a device, pipe or socket), "
                       "which the atomic write would replace" + allowed);
  struct stat st {};
  REQUIRE(::stat("/dev/full", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));

  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
  r = test::run_command(bin() + " simulate " + kScenario + " --json fifo", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --json: value fifo: is not a regular file (a device, pipe or socket), which "
                       "the atomic write would replace" + allowed);
  CHECK(fs::is_fifo(fs::symlink_status(dir / "fifo")));

  write(dir / "target.json", "keep");
  fs::create_symlink("target.json", dir / "link.json");
  r = test::run_command(bin() + " plan " + kScenario + " --no-skew --json link.json", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --json: value link.json: is a symbolic link, which the atomic write would "
                       "replace" + allowed);
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link.json")));
  CHECK(test::slurp((dir / "target.json").string()) == "keep");

  fs::create_directory(dir / "folder");
  r = test::run_command(bin() + " simulate " + kScenario + " --html folder", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --html: value folder: is a folder" + allowed);
  CHECK(listing(dir) == std::set<std::string>{"fifo", "folder", "link.json", "target.json"});
}

TEST_CASE("one missing output folder fails the command before any work and leaves none of its other outputs") {
  const fs::path dir = fresh("partial");
  const std::string allowed = "; allowed: a new file or a regular file in an existing, writable folder, or - for standard output";
  auto r = test::run_command(bin() + " simulate " + kScenario + " --json nodir/r.json --html r.html --trace t.json",
                             dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --json: value nodir/r.json: its folder nodir does not exist" + allowed);
  r = test::run_command(bin() + " plan " + kScenario + " --no-skew --json p.json --html nodir/p.html", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --html: value nodir/p.html: its folder nodir does not exist" + allowed);
  r = test::run_command(bin() + " simulate " + kScenario + " --json same.json --html same.json", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) ==
        "moesim: error: at --html: value same.json: the same file as --json; allowed: a different file for each output");
  CHECK(listing(dir).empty());
}

TEST_CASE("- is standard output for outputs and standard input for inputs") {
  const fs::path dir = fresh("dash");
  auto r = test::run_command(bin() + " simulate " + kScenario + " --fidelity estimate --json -", dir.string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // The JSON alone, whole: no summary table before or after it.
  CHECK(r.out.rfind("{\n", 0) == 0);
  CHECK(r.out.ends_with("}\n"));
  CHECK(r.out.find("\"schema\": \"moesim.result/1\"") != std::string::npos);
  CHECK(r.out.find("· fidelity") == std::string::npos);
  CHECK(listing(dir).empty());                                          // no file named "-"
  const fs::path example = test::shared_dir() / "spec/examples/mixtral-8x7b-h100-64.json";
  if (fs::exists(example)) {
    r = test::run_command("cat '" + example.string() + "' | " + bin() + " simulate - --fidelity estimate -q --json out.json",
                          dir.string());
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(listing(dir) == std::set<std::string>{"out.json"});
    fs::remove(dir / "out.json");
  }
  r = test::run_command("echo '{\"model\": 1}' | " + bin() + " simulate -", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err).rfind("moesim: error: -: at /model: value 1: ", 0) == 0);
}

TEST_CASE("NaN and infinities are refused by every float option; duplicate JSON keys by every loader (exit 2)") {
  auto r = test::run_command(bin() + " memory " + kScenario + " --expert-load nan", root());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --expert-load: value nan: not a finite number; allowed: numbers from 1 to 1000 "
                       "(see 'moesim memory --help')");
  r = test::run_command(bin() + " plan " + kScenario + " --host-sync-idle-s nan", root());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --host-sync-idle-s: value nan: not a finite number; allowed: numbers from 0 "
                       "to 1 (see 'moesim plan --help')");
  r = test::run_command(bin() + " plan " + kScenario + " --token-budget nan", root());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --token-budget: value nan: not a finite number; allowed: numbers from 0 to "
                       "1e+18 (see 'moesim plan --help')");
  r = test::run_command(bin() + " plan " + kScenario + " --token-budget inf", root());
  CHECK(r.exit_code == 2);
  r = test::run_command(bin() + " topo show hgx-h100 --gpus 16 --oversubscription -inf", root());
  CHECK(r.exit_code == 2);

  const fs::path dir = fresh("duplicate");
  write(dir / "dup.json", R"({"model": "llama-3-8b", "system": {"preset": "hgx-h100", "gpus": 8, "gpus": 16}})");
  r = test::run_command(bin() + " simulate dup.json", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: dup.json: at /system/gpus: duplicate key 'gpus' (JSON parsers disagree on which "
                       "value wins); allowed: each key once per object");
}

TEST_CASE("wrong arguments get moesim's one-line error and exit 2, with the names they might mean") {
  auto r = test::run_command(bin() + " accuracy --group nosuch", root());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err).rfind("moesim: error: ", 0) == 0);
  CHECK(r.err.find("at --group: value nosuch: no point has this group; allowed: ") != std::string::npos);
  CHECK(r.out.empty());

  r = test::run_command(bin() + " plan --model mixtral-8x7b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256 "
                                "--precision nvfp4",
                        root());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --precision: value nvfp4: h100-sxm does not support nvfp4; allowed: bf16, fp8, "
                       "fp8-blockwise, or all");

  // CLI11's own parse errors, each on one line in moesim's form.
  for (const std::string& args : std::vector<std::string>{"simulate", "simulate a b", "simulate " + kScenario + " --no-such-flag",
                                                          "simulate " + kScenario + " --fidelity exact", "plan --seq 0", ""}) {
    CAPTURE(args);
    r = test::run_command(bin() + " " + args, root());
    CHECK(r.exit_code == 2);
    CHECK(trim(r.err).rfind("moesim: error: ", 0) == 0);
    CHECK(trim(r.err).find('\n') == std::string::npos);
  }

  r = test::run_command(bin() + " regress --baselines /nonexistent", root());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --baselines: value /nonexistent: no such folder; allowed: a folder of "
                       "moesim.baseline/1 files, e.g. reports/baselines");

  const fs::path dir = fresh("merge-plan");
  r = test::run_command(bin() + " plan " + kScenario + " --no-skew -q --json plan.json", dir.string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  r = test::run_command(bin() + " merge plan.json", dir.string());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: plan.json: at /schema: value \"moesim.plan/1\": this is a plan (moesim.plan/1), "
                       "not a plan shard (written by moesim plan --shard i/N --json FILE); allowed: moesim.plan-shard/1");

  r = test::run_command(bin() + " simulate mixtral-8x7b-h100-46", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("file not found, and not a built-in scenario (did you mean \"mixtral-8x7b-h100-64\"?)") !=
        std::string::npos);
  r = test::run_command(bin() + " models show deepseek-v4", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown model preset (did you mean \"deepseek-v3\"?)") != std::string::npos);
  r = test::run_command(bin() + " systems show dgx-h100", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown system preset (did you mean \"dgx-a100\" or \"hgx-h100\"?)") != std::string::npos);
}

namespace {

struct Stopped {
  int exit_code = -1;
  std::string err;
};

// Starts `moesim args` in `dir`, sends `signo` after `after`, and waits for it.
Stopped stop_after(const fs::path& dir, const std::vector<std::string>& args, int signo, std::chrono::milliseconds after) {
  const fs::path err = dir.parent_path() / (dir.filename().string() + ".stderr");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    if (!std::freopen(err.c_str(), "w", stderr)) ::_exit(127);
    if (!std::freopen("/dev/null", "w", stdout)) ::_exit(127);
    std::string binary = test::moesim_binary();
    std::vector<std::string> copy = args;
    std::vector<char*> argv{binary.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  std::this_thread::sleep_for(after);
  ::kill(pid, signo);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Stopped s;
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  s.err = test::slurp(err.string());
  return s;
}

}  // namespace

TEST_CASE("simulate stops cleanly on Ctrl-C (130) and SIGTERM (143), writing nothing") {
  const std::string scenario = (test::source_dir() / "tests/cli/data/deepseek-v3-1024-lognormal.json").string();
  for (const std::pair<int, int>& signal_and_code : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
    const int signo = signal_and_code.first, code = signal_and_code.second;  // clang 14 cannot capture bindings
    CAPTURE(signo);
    const fs::path dir = fresh("signal-" + std::to_string(signo));
    const Stopped s = stop_after(dir, {"simulate", scenario, "--json", "r.json", "--html", "r.html", "--trace", "t.json"},
                                 signo, std::chrono::milliseconds(2500));
    CHECK(s.exit_code == code);
    CHECK(trim(s.err) == "moesim: stopped: stopped while simulating the step");
    CHECK(listing(dir).empty());
  }
}

TEST_CASE("progress is drawn only on a terminal, at most a few times a second, with percent, rate and ETA") {
  // Not on a pipe or in a log: stderr stays empty.
  auto r = test::run_command(bin() + " plan " + kScenario + " --no-skew", root());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // On a terminal (script(1) gives it one): a line per redraw, each with its phase and percent.
  if (::access("/usr/bin/script", X_OK) != 0) {
    MESSAGE("skipped the terminal half: no /usr/bin/script");
    return;
  }
  const fs::path dir = fresh("tty");
  const auto start = std::chrono::steady_clock::now();
  r = test::run_command("/usr/bin/script -qfec \"" + bin() + " plan " + kScenario + " --no-skew --top 3 >/dev/null\" " +
                            "typescript </dev/null >/dev/null",
                        dir.string());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(r.exit_code == 0);
  const std::string screen = test::slurp((dir / "typescript").string());
  std::size_t redraws = 0;
  for (std::size_t at = screen.find("\r\033[Ksearching"); at != std::string::npos;
       at = screen.find("\r\033[Ksearching", at + 1)) {
    ++redraws;
  }
  CHECK(redraws >= 1);
  CHECK(static_cast<double>(redraws) <= 2 + 5 * seconds);  // ≤ 4 a second, plus each phase's first and last
  CHECK(screen.find("% ") != std::string::npos);
  CHECK(screen.find(" candidates") != std::string::npos);
}
