#pragma once
// Typed errors. Library code throws; only cli/ turns an error into an exit code.
#include <stdexcept>
#include <string>

namespace moesim {

/// Exit codes of the `moesim` binary (documented in README.md).
enum class ExitCode : int { kOk = 0, kInternal = 1, kBadInput = 2, kInfeasible = 3 };

/// Bad user input: a file that cannot be read or parsed, an unknown key, a wrong type, a value out of
/// range or an impossible layout. Carries everything the one-line message needs:
///   `FILE: at JSON_PATH: value VALUE: RULE; allowed: ALLOWED`
/// e.g. `bad.json: at /parallel/tp: value 3: tp must divide model.num_attention_heads (32); allowed: 1, 2, 4, 8, 16, 32`.
/// Loaders deep in a file throw with a path relative to what they parse; callers prefix it with
/// `under()` and attach the file with `in_file()` on the way out.
class InputError : public std::exception {
 public:
  InputError(std::string json_path, std::string value, std::string rule, std::string allowed = {});

  /// Sets the file when none is set yet (the innermost file wins: an HF config.json named by a scenario).
  InputError& in_file(const std::string& file);
  /// Prefixes the JSON path: `under("/model")` turns `/num_layers` into `/model/num_layers`.
  InputError& under(const std::string& prefix);

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& json_path() const { return json_path_; }
  [[nodiscard]] const std::string& value() const { return value_; }
  [[nodiscard]] const std::string& rule() const { return rule_; }
  [[nodiscard]] const std::string& allowed() const { return allowed_; }
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }

 private:
  void rebuild();
  std::string file_, json_path_, value_, rule_, allowed_, message_;
};

/// A bug or an unexpected state inside moesim (exit code 1).
class InternalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Work stopped early by SIGINT or SIGTERM (core/interrupt); the CLI exits 128 + the signal number.
class StoppedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A question with no answer: e.g. a plan where no layout fits (exit code 3).
class InfeasibleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace moesim
