#pragma once
// File I/O shared by every writer: outputs are never half-written.
#include <filesystem>
#include <string>
#include <string_view>

namespace moesim {

/// Reads a whole file; throws InputError (path "/", rule "cannot read file") when it is missing or unreadable.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& path);

/// Writes `content` to a temporary file beside `path`, flushes it, then renames it over `path`, so
/// a reader (or a crash) never sees a partial file. Throws InputError when the folder is not writable.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace moesim
