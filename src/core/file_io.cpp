#include "core/file_io.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>
#include <unistd.h>

#include "core/error.hpp"

namespace moesim {

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw InputError("", "", "file not found").in_file(path.string());
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError("", "", "is a directory, expected a file").in_file(path.string());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("", "", "cannot open file for reading").in_file(path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError("", "", "cannot create output file (is the folder writable?)").in_file(path.string());
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      out.close();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw InputError("", "", "cannot write output file (disk full?)").in_file(path.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InputError("", "", "cannot rename temporary output into place").in_file(path.string());
  }
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path)
    : path_(std::move(path)), tmp_(path_.string() + ".tmp." + std::to_string(::getpid())) {
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    done_ = true;  // nothing was created, so the destructor has nothing to clean up
    throw InputError("", "", "cannot create output file (is the folder writable?)").in_file(path_.string());
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (done_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);  // a destructor must not throw; a stray temp file is the worst case
}

void AtomicFileWriter::append(std::string_view chunk) {
  if (done_) throw InternalError("AtomicFileWriter::append after commit or failure: " + path_.string());
  out_.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  if (!out_) fail("cannot write output file (disk full?)");
}

void AtomicFileWriter::commit() {
  if (done_) throw InternalError("AtomicFileWriter::commit called twice or after a failure: " + path_.string());
  out_.flush();
  out_.close();
  if (!out_) fail("cannot write output file (disk full?)");
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) fail("cannot rename temporary output into place");
  done_ = true;
}

[[noreturn]] void AtomicFileWriter::fail(const char* rule) {
  done_ = true;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
  throw InputError("", "", rule).in_file(path_.string());
}

}  // namespace moesim
