#pragma once
// The contract every fuzz target checks: a loader given arbitrary bytes either accepts them or
// throws InputError naming the file and the rule it broke. Anything else — another exception type,
// an InputError without a file or rule, a crash, a sanitizer report, a hang or a leak (the last four
// caught by libFuzzer and ASan) — is a bug, and the target aborts so that libFuzzer saves the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "core/error.hpp"

namespace moesim::fuzz {

/// The file name every target hands its loader, so that messages can be checked for it.
inline constexpr const char* kInputName = "fuzz-input.json";

[[noreturn]] inline void fail(const char* what, const char* detail) {
  std::fprintf(stderr, "moesim fuzz: %s: %s\n", what, detail);
  std::abort();
}

/// Loader calls that accepted and refused their input (the corpus replay prints them: a corpus whose
/// valid seeds are all refused would fuzz nothing but the first check).
inline long g_accepted = 0, g_refused = 0;

/// Runs `load` and checks that it either returns or refuses the input properly.
template <typename F>
void expect_accept_or_refuse(F&& load) {
  try {
    load();
    ++g_accepted;
  } catch (const InputError& e) {
    ++g_refused;
    if (e.file().empty()) fail("InputError without the file it is about", e.what());
    if (e.rule().empty()) fail("InputError without a rule", e.what());
  } catch (const std::exception& e) {
    fail(typeid(e).name(), e.what());
  }
}

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace moesim::fuzz
