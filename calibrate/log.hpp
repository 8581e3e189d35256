#pragma once
// The calibration log: progress and warnings go to stderr and the log file; every measurement's
// detail line goes to the log file (or to stderr when there is no log file).
#include <fstream>
#include <string>
#include <string_view>

namespace moesim::calibrate {

class Log {
 public:
  /// `path` empty: no file. Throws moesim::InputError when the file cannot be opened.
  explicit Log(const std::string& path);

  void detail(std::string_view line);
  void progress(std::string_view line);
  void warning(std::string_view line);

 private:
  void to_file(std::string_view line);
  std::ofstream file_;
  bool has_file_ = false;
};

}  // namespace moesim::calibrate
