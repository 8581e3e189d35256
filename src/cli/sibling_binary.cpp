#include "cli/sibling_binary.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

extern char** environ;

namespace moesim::cli {

namespace fs = std::filesystem;

fs::path sibling_binary(const std::string& name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : self.parent_path()) / name;
}

int run_binary(const fs::path& binary, const std::vector<std::string>& args, const std::string& who) {
  std::vector<char*> argv;
  std::string path = binary.string();
  argv.push_back(path.data());
  std::vector<std::string> owned(args);
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int err = posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv.data(), environ); err != 0) {
    std::fprintf(stderr, "%s: cannot start %s: %s\n", who.c_str(), path.c_str(), std::strerror(err));
    return static_cast<int>(ExitCode::kInternal);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return static_cast<int>(ExitCode::kInternal);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::fprintf(stderr, "%s: %s ended by signal %d\n", who.c_str(), path.c_str(), WTERMSIG(status));
  return static_cast<int>(ExitCode::kInternal);
}

}  // namespace moesim::cli
