#include "calibrate/log.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace moesim::calibrate {

Log::Log(const std::string& path) {
  if (path.empty()) return;
  file_.open(path, std::ios::out | std::ios::trunc);
  if (!file_) throw InputError("", "", "cannot open the log file for writing").in_file(path);
  has_file_ = true;
}

void Log::to_file(std::string_view line) {
  if (!has_file_) return;
  file_ << line << '\n';
  file_.flush();  // a run cut short by a timeout still leaves its log
}

void Log::detail(std::string_view line) {
  if (has_file_) {
    to_file(line);
  } else {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  }
}

void Log::progress(std::string_view line) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  std::fflush(stderr);
  to_file(line);
}

void Log::warning(std::string_view line) {
  std::fprintf(stderr, "moesim-calibrate: warning: %.*s\n", static_cast<int>(line.size()), line.data());
  std::fflush(stderr);
  to_file(std::string("warning: ") + std::string(line));
}

}  // namespace moesim::calibrate
