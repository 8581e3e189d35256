#pragma once
// Helpers for the invalid-input tables (tests/invalid, tests/invalid-topology): the message a
// loader refuses a file with, and the first line of an .expect file or of captured stderr.
#include <string>

#include "core/error.hpp"

namespace moesim::test {

/// The InputError message `load(path)` throws, or "" when the file loads.
template <class Loader>
std::string refusal(Loader&& load, const std::string& path) {
  try {
    (void)load(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline std::string first_line(std::string text) {
  if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

}  // namespace moesim::test
