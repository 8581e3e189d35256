#include "core/file_io.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"

namespace moesim {
namespace {

// Files moesim reads are hand-written specs, HF config.json files, histograms and its own outputs:
// the largest real ones are a few MB. 256 MiB is far above them and far below what would exhaust memory
// once parsed.
constexpr std::uintmax_t kMaxInputBytes = 256ull << 20;

std::filesystem::path folder_of(const std::filesystem::path& path) {
  const auto parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

std::string named_temporary(const std::filesystem::path& path) { return path.string() + ".tmp." + std::to_string(::getpid()); }

// A temporary `NAME.tmp.PID` beside `path` left by a process that was killed (SIGKILL cannot be
// caught) is removed by the next writer of `path`; one whose process still runs is left alone.
void remove_stale_temporaries(const std::filesystem::path& path) {
  const std::string prefix = path.filename().string() + ".tmp.";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder_of(path), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) continue;
    const auto pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid() || (::kill(pid, 0) == -1 && errno == ESRCH)) {
      std::error_code rm;
      std::filesystem::remove(it->path(), rm);
    }
  }
}

// Standard input, read to its end but never past the input cap (`cat /dev/zero | moesim simulate -`).
std::string read_standard_input() {
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError("", "", std::string("cannot read standard input: ") + std::strerror(errno)).in_file("-");
    if (n == 0) return text;
    text.append(chunk, static_cast<std::size_t>(n));
    if (text.size() > kMaxInputBytes) {
      throw InputError("", "more than " + std::to_string(kMaxInputBytes) + " bytes", "input too large",
                       "at most " + std::to_string(kMaxInputBytes) + " bytes (256 MiB)")
          .in_file("-");
    }
  }
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  if (path == kStdStream) return read_standard_input();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw InputError("", "", "file not found").in_file(path.string());
  if (std::filesystem::is_directory(status)) {
    throw InputError("", "", "is a directory, expected a file").in_file(path.string());
  }
  // A device, FIFO or socket (/dev/zero, /dev/stdin) could be endless: only regular files are read.
  if (!std::filesystem::is_regular_file(status)) {
    throw InputError("", "", "is not a regular file (a device, pipe or socket)", "a regular file").in_file(path.string());
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputBytes) {
    throw InputError("", std::to_string(size) + " bytes", "input file too large",
                     "at most " + std::to_string(kMaxInputBytes) + " bytes (256 MiB)")
        .in_file(path.string());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("", "", "cannot open file for reading").in_file(path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_output_path(const std::filesystem::path& path) {
  if (path == kStdStream) return;
  const std::string allowed = "a new file or a regular file in an existing, writable folder, or - for standard output";
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    // An atomic write renames a new file over the name: over a link it would replace the link, over
    // /dev/full or a FIFO the device node or the pipe. Only regular files are replaced.
    if (S_ISLNK(st.st_mode)) {
      throw InputError("", "", "is a symbolic link, which the atomic write would replace", allowed).in_file(path.string());
    }
    if (S_ISDIR(st.st_mode)) throw InputError("", "", "is a folder", allowed).in_file(path.string());
    if (!S_ISREG(st.st_mode)) {
      throw InputError("", "", "is not a regular file (a device, pipe or socket), which the atomic write would replace",
                       allowed)
          .in_file(path.string());
    }
  } else if (errno != ENOENT) {
    throw InputError("", "", std::string("cannot check the output: ") + std::strerror(errno), allowed).in_file(path.string());
  }
  const std::filesystem::path folder = folder_of(path);
  std::error_code ec;
  const auto status = std::filesystem::status(folder, ec);
  if (!std::filesystem::exists(status)) {
    throw InputError("", "", "its folder " + folder.string() + " does not exist", allowed).in_file(path.string());
  }
  if (!std::filesystem::is_directory(status)) {
    throw InputError("", "", folder.string() + " is not a folder", allowed).in_file(path.string());
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw InputError("", "", "its folder " + folder.string() + " is not writable", allowed).in_file(path.string());
  }
}

void check_output_path_of(std::string_view option, const std::string& path) {
  if (path.empty()) return;
  try {
    check_output_path(path);
  } catch (const InputError& e) {
    throw InputError(std::string(option), path, e.rule(), e.allowed());
  }
}

// PendingFile: the file being written. On Linux it is an unnamed inode (O_TMPFILE) in the target's
// folder, so a process killed mid-write — even by SIGKILL — leaves nothing behind; it gets a name only
// at commit (linkat through /proc/self/fd, then rename over the target, both atomic). Where the file
// system lacks O_TMPFILE it falls back to a named `PATH.tmp.PID`.
AtomicFileWriter::PendingFile::PendingFile(const std::filesystem::path& path) : path_(path) {
  if (path_ == kStdStream) {
    // Standard output gets the whole content at commit, or nothing: it waits in an unnamed temporary.
    to_stdout_ = true;
    std::error_code ec;
    const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
    const std::string folder = ec ? std::string("/tmp") : tmp.string();
#ifdef O_TMPFILE
    fd_ = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
    if (fd_ < 0) {
      std::string name = folder + "/moesim-stdout-XXXXXX";
      fd_ = ::mkstemp(name.data());
      if (fd_ >= 0) ::unlink(name.c_str());
    }
    if (fd_ < 0) {
      throw InputError("", "", std::string("cannot create a temporary for standard output: ") + std::strerror(errno))
          .in_file(path_.string());
    }
    return;
  }
  check_output_path(path_);
  remove_stale_temporaries(path_);
#ifdef O_TMPFILE
  fd_ = ::open(folder_of(path_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#endif
  if (fd_ < 0) {
    named_ = named_temporary(path_);
    fd_ = ::open(named_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd_ < 0) {
    named_.clear();
    throw InputError("", "", std::string("cannot create output file (is the folder writable?): ") + std::strerror(errno))
        .in_file(path_.string());
  }
}

AtomicFileWriter::PendingFile::~PendingFile() { abandon(); }

void AtomicFileWriter::PendingFile::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::string("cannot write output file (disk full?): ") + std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicFileWriter::PendingFile::copy_to_stdout() {
  std::fflush(stdout);  // what the command printed before comes first
  if (::lseek(fd_, 0, SEEK_SET) != 0) fail(std::string("cannot rewind the standard-output temporary: ") + std::strerror(errno));
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("cannot read the standard-output temporary: ") + std::strerror(errno));
    if (n == 0) break;
    std::string_view bytes(chunk, static_cast<std::size_t>(n));
    while (!bytes.empty()) {
      const ssize_t w = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail(std::string("cannot write standard output: ") + std::strerror(errno));
      bytes.remove_prefix(static_cast<std::size_t>(w));
    }
  }
  ::close(fd_);
  fd_ = -1;
}

void AtomicFileWriter::PendingFile::commit() {
  if (to_stdout_) {
    copy_to_stdout();
    return;
  }
  // fsync before the rename: after a power loss the name never points at an empty or partial file.
  if (::fsync(fd_) != 0) fail(std::string("cannot flush output file: ") + std::strerror(errno));
  if (named_.empty()) {
    const std::string name = named_temporary(path_);
    ::unlink(name.c_str());
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      fail(std::string("cannot name the temporary output: ") + std::strerror(errno));
    }
    named_ = name;
  }
  if (::rename(named_.c_str(), path_.c_str()) != 0) fail(std::string("cannot rename temporary output into place: ") + std::strerror(errno));
  named_.clear();
  ::close(fd_);
  fd_ = -1;
}

void AtomicFileWriter::PendingFile::abandon() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!named_.empty()) ::unlink(named_.c_str());
  named_.clear();
}

[[noreturn]] void AtomicFileWriter::PendingFile::fail(const std::string& rule) {
  abandon();
  throw InputError("", "", rule).in_file(path_.string());
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  AtomicFileWriter out(path);
  out.append(content);
  out.commit();
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)), file_(path_) {}

AtomicFileWriter::~AtomicFileWriter() = default;  // an uncommitted file is abandoned: nothing appears

void AtomicFileWriter::append(std::string_view chunk) {
  if (done_) throw InternalError("AtomicFileWriter::append after commit or failure: " + path_.string());
  // Many small chunks (trace events) become few large writes.
  buffer_.append(chunk);
  if (buffer_.size() >= kBufferBytes) flush_buffer();
}

void AtomicFileWriter::commit() {
  if (done_) throw InternalError("AtomicFileWriter::commit called twice or after a failure: " + path_.string());
  flush_buffer();
  done_ = true;
  file_.commit();
}

void AtomicFileWriter::flush_buffer() {
  try {
    file_.write(buffer_);
  } catch (...) {
    done_ = true;
    throw;
  }
  buffer_.clear();
}

void OutputBatch::expect(std::string_view option, const std::string& path) {
  if (path.empty()) return;
  for (const auto& [other, other_option] : expected_) {
    if (other == path) {
      throw InputError(std::string(option), path,
                       path == kStdStream ? "standard output can take only one output (" + other_option + " has it)"
                                          : "the same file as " + other_option,
                       "a different file for each output");
    }
  }
  check_output_path_of(option, path);
  expected_.emplace_back(path, std::string(option));
}

AtomicFileWriter& OutputBatch::open(const std::string& path) {
  const bool known = std::any_of(expected_.begin(), expected_.end(), [&](const auto& e) { return e.first == path; });
  if (!known) throw InternalError("OutputBatch: output not checked before the work: " + path);
  files_.push_back(std::make_unique<AtomicFileWriter>(path));
  return *files_.back();
}

void OutputBatch::write(const std::string& path, std::string_view content) { open(path).append(content); }

AtomicFileWriter& OutputBatch::stream(const std::string& path) { return open(path); }

void OutputBatch::commit() {
  for (auto& f : files_) f->commit();
  files_.clear();
}

}  // namespace moesim
