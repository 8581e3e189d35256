#pragma once
// Paths tests use: the repository root and the shared/ folder beside it (../shared from the repo,
// as CI lays it out). Tests that need shared/ files are skipped with a message when it is absent.
#include <filesystem>
#include <string>

namespace moesim::test {
inline std::filesystem::path source_dir() { return MOESIM_SOURCE_DIR; }
inline std::filesystem::path binary_dir() { return MOESIM_BINARY_DIR; }
inline std::filesystem::path shared_dir() { return source_dir().parent_path() / "shared"; }
inline std::string moesim_binary() { return (binary_dir() / "moesim").string(); }
}  // namespace moesim::test
