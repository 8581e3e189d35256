#pragma once
// File I/O shared by every writer: outputs are never half-written.
#include <filesystem>
#include <string>
#include <string_view>

namespace moesim {

/// Reads a whole file; throws InputError (path "/", rule "cannot read file") when it is missing or unreadable.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& path);

/// Writes `content` to a temporary file beside `path`, flushes it to disk, then renames it over `path`,
/// so a reader (or a crash, or a kill) never sees a partial file. Throws InputError when the folder is
/// not writable or the disk is full.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// The streaming form of write_file_atomically, for outputs too large to build as one string (a trace
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
    std::filesystem::path path_;
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

}  // namespace moesim
