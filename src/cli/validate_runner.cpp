#include "cli/validate_runner.hpp"

#include <cstdlib>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/sibling_binary.hpp"
#include "config/measured_run_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "report/validation_workload_json.hpp"

namespace moesim::cli {

namespace fs = std::filesystem;

namespace {

/// A private folder (mkdtemp: mode 0700, a fresh name) removed when done unless kept for a look.
class ScratchDir {
 public:
  ScratchDir() {
    std::string name = (fs::temp_directory_path() / "moesim-validate-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) {
      throw InputError("", "", std::string("cannot create a temporary folder: ") + std::strerror(errno))
          .in_file(name);
    }
    path_ = name;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!keep_) fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  fs::path path_;
  bool keep_ = false;
};

}  // namespace

int run_validation_runner(const fs::path& runner, const ValidationWorkload& w, MeasuredRun& run) {
  ScratchDir dir;
  const fs::path workload = dir.path() / "workload.json";
  const fs::path measured = dir.path() / "measured.json";
  const fs::path log = dir.path() / "run.log";
  write_file_atomically(workload, report::validation_workload_to_json_text(w));
  const std::string name = runner.filename().string();
  std::printf("moesim validate: running %s: %lld warm-up and %lld timed step(s) on %lld GPU(s)\n", name.c_str(),
              static_cast<long long>(w.warmup), static_cast<long long>(w.steps), static_cast<long long>(w.gpus));
  std::fflush(stdout);
  const int rc = run_binary(
      runner, {"--workload", workload.string(), "--out", measured.string(), "--log", log.string()}, "moesim validate");
  if (rc != 0) {
    dir.keep();
    std::fprintf(stderr, "moesim validate: %s failed (exit %d); its workload (and log, if it wrote one) are kept "
                         "in %s; nothing written\n",
                 name.c_str(), rc, dir.path().string().c_str());
    return rc;
  }
  try {
    run = config::load_measured_run(measured.string());
  } catch (InputError&) {
    dir.keep();
    throw;
  }
  return 0;
}

}  // namespace moesim::cli
