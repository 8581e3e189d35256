#pragma once
// Files tests write to read back through a loader: a scratch folder per test, and a one-place edit of
// a good file's text into a bad one.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace moesim::test {

/// Writes `text` to <temp>/<folder>/<name> and returns the path.
inline std::string write_scratch(const std::string& folder, const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / folder;
  std::filesystem::create_directories(dir);
  const std::filesystem::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

/// `text` with the first `from` replaced by `to`; fails the test when `from` is not there.
inline std::string replaced_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

}  // namespace moesim::test
