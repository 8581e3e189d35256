#pragma once
// File I/O shared by every writer: outputs are never half-written.
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace moesim {

/// Reads a whole file; throws InputError (path "/", rule "cannot read file") when it is missing or unreadable.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& path);

/// Writes `content` to a temporary file beside `path`, flushes it, then renames it over `path`, so
/// a reader (or a crash) never sees a partial file. Throws InputError when the folder is not writable.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// The streaming form of write_file_atomically, for outputs too large to build as one string (a trace
/// of millions of events): append() chunks to a temporary file beside `path`, then commit() renames it
/// over `path`. Destroyed without commit() (an exception on the way), it removes the temporary file
/// and leaves `path` as it was. A failure to write throws InputError naming `path`; append() or
/// commit() after commit() (or after a failure) is an InternalError.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void append(std::string_view chunk);
  /// Flushes, closes and renames into place; append() and commit() are errors afterwards.
  void commit();

 private:
  [[noreturn]] void fail(const char* rule);  // removes the temporary file, then throws
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::ofstream out_;
  bool done_ = false;
};

}  // namespace moesim
