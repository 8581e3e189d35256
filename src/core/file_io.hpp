#pragma once
// File I/O shared by every writer: outputs are never half-written.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moesim {

/// The name that means standard input for an input and standard output for an output.
inline constexpr std::string_view kStdStream = "-";

/// Reads a whole file ("-": standard input); throws InputError (path "/", rule "cannot read file") when it
/// is missing or unreadable.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& path);

/// Checks, before any work, that `path` can become an output: "-" (standard output), or a file whose
/// folder exists and is writable and which is new or a regular file — never a device, pipe, socket,
/// folder or symbolic link, which an atomic rename would replace. Throws InputError naming `path`.
void check_output_path(const std::filesystem::path& path);
/// check_output_path for the command-line option `option` ("--json"), whose error names the option and
/// the value; an empty path (the option not given) passes.
void check_output_path_of(std::string_view option, const std::string& path);

/// Writes `content` to a temporary file beside `path`, flushes it to disk, then renames it over `path`,
/// so a reader (or a crash, or a kill) never sees a partial file. "-" writes to standard output. Throws
/// InputError when the folder is not writable, the target is not a regular file (check_output_path) or
/// the disk is full.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// The streaming form of write_file_atomically (for "-" the content waits in an unnamed temporary
/// and goes to standard output at commit), for outputs too large to build as one string (a trace
/// of millions of events): append() chunks, then commit() puts the whole file in place. Destroyed
/// without commit() (an exception on the way), it leaves `path` as it was and no temporary behind. A
/// failure to write throws InputError naming `path`; append() or commit() after commit() (or after a
/// failure) is an InternalError.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void append(std::string_view chunk);
  /// Flushes, syncs and renames into place; append() and commit() are errors afterwards.
  void commit();

 private:
  /// The open temporary: an unnamed O_TMPFILE inode where the file system has them, else PATH.tmp.PID.
  class PendingFile {
   public:
    explicit PendingFile(const std::filesystem::path& path);
    ~PendingFile();
    PendingFile(const PendingFile&) = delete;
    PendingFile& operator=(const PendingFile&) = delete;
    void write(std::string_view bytes);
    void commit();
    void abandon() noexcept;

   private:
    [[noreturn]] void fail(const std::string& rule);
    void copy_to_stdout();
    std::filesystem::path path_;
    bool to_stdout_ = false;
    std::string named_;  ///< the temporary's name while it has one
    int fd_ = -1;
  };
  static constexpr std::size_t kBufferBytes = 1 << 20;
  void flush_buffer();

  std::filesystem::path path_;
  PendingFile file_;
  std::string buffer_;
  bool done_ = false;
};

/// The outputs of one command, written together at the end: expect() checks every path before any
/// work (check_output_path; two outputs may not name one file), write() and stream() fill unnamed
/// temporaries, and commit() puts every file in place at once. A command that fails or is stopped
/// before commit() leaves no file at all, not the first of its outputs.
class OutputBatch {
 public:
  /// Checks `path`, given by `option` ("--json"); an empty path (the option not given) is ignored.
  void expect(std::string_view option, const std::string& path);
  /// The whole content of the output `path` (which expect() checked).
  void write(const std::string& path, std::string_view content);
  /// A writer for content too large to hold (a trace), committed with the rest.
  AtomicFileWriter& stream(const std::string& path);
  /// Puts every output in place.
  void commit();

 private:
  AtomicFileWriter& open(const std::string& path);
  std::vector<std::pair<std::string, std::string>> expected_;  ///< (path, option)
  std::vector<std::unique_ptr<AtomicFileWriter>> files_;
};

}  // namespace moesim
