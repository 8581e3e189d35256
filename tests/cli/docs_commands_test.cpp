// Every `build/moesim ...` command shown in README.md and docs/*.md runs and exits 0, so the
// documentation cannot drift from the CLI. Commands run in a scratch folder laid out like the
// repository (build/, tests/, src/ and ../shared/ reachable), so their output files land there.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "../test_paths.hpp"
#include "../run_command.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> documented_commands(const fs::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  std::string line;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      continue;
    }
    if (!in_block) continue;
    std::string cmd = line;
    if (cmd.rfind("$ ", 0) == 0) cmd = cmd.substr(2);
    // "bash .ci/setup && build/moesim ...": the set-up part is what CI itself runs; test the rest.
    if (auto pos = cmd.find("&& build/moesim"); pos != std::string::npos) cmd = cmd.substr(pos + 3);
    if (cmd.rfind("build/moesim", 0) == 0) out.push_back(cmd);
  }
  return out;
}

fs::path scratch() {
  const fs::path top = test::binary_dir() / "docs-run";
  const fs::path work = top / "repo";
  fs::create_directories(work);
  auto link = [](const fs::path& target, const fs::path& at) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(at))) fs::create_directory_symlink(target, at, ec);
  };
  link(test::binary_dir(), work / "build");
  link(test::source_dir() / "tests", work / "tests");
  link(test::source_dir() / "src", work / "src");
  link(test::source_dir() / "topologies", work / "topologies");
  link(test::source_dir() / "docs", work / "docs");
  link(test::shared_dir(), top / "shared");
  return work;
}
}  // namespace

TEST_CASE("commands in README.md and docs/ run and exit 0") {
  std::vector<fs::path> files{test::source_dir() / "README.md"};
  if (fs::exists(test::source_dir() / "docs")) {
    for (const auto& e : fs::directory_iterator(test::source_dir() / "docs")) {
      if (e.path().extension() == ".md") files.push_back(e.path());
    }
  }
  const fs::path work = scratch();
  const bool have_shared = fs::exists(test::shared_dir());
  int ran = 0;
  // A command shown in several places (the README's plan is also the planner guide's) runs once: it is
  // the same command in the same folder either way.
  std::set<std::string> seen;
  for (const auto& f : files) {
    for (const auto& cmd : documented_commands(f)) {
      CAPTURE(f.filename().string());
      CAPTURE(cmd);
      if (!seen.insert(cmd).second) continue;
      if (!have_shared && cmd.find("../shared") != std::string::npos) {
        MESSAGE("skipped (no ../shared): " << cmd);
        continue;
      }
      const auto r = test::run_command(cmd, work.string());
      CHECK_MESSAGE(r.exit_code == 0, r.err);
      ++ran;
    }
  }
  CHECK(ran >= 5);
}
