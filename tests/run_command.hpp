#pragma once
// Runs a shell command for the CLI tests and captures its exit code and output.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace moesim::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

inline std::string slurp(const std::string& path) {
  std::string s;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) s.append(buf.data(), n);
    std::fclose(f);
  }
  return s;
}

/// Runs `command` with /bin/sh in `cwd`; stdout and stderr are captured separately.
inline CommandResult run_command(const std::string& command, const std::string& cwd) {
  static int counter = 0;
  const std::string base = std::string(MOESIM_BINARY_DIR) + "/cli-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  const std::string full = "cd '" + cwd + "' && (" + command + ") >'" + base + ".out' 2>'" + base + ".err'";
  const int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

}  // namespace moesim::test
