// core/file_io under faults (issue 11): an abandoned write leaves nothing, a dead process's temporary
// is cleaned up, and inputs that are not plain files of sane size are refused before reading.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/file_io.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {

fs::path fresh(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("moesim_file_io_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// The pid of a process that has exited and been reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

}  // namespace

TEST_CASE("a streamed write abandoned before commit leaves the target as it was and no temporary") {
  const fs::path dir = fresh("abandon");
  const fs::path target = dir / "trace.json";
  {
    AtomicFileWriter w(target);
    w.append(std::string(3 << 20, 'x'));  // larger than the buffer: bytes reached the file
    CHECK(names(dir).empty());            // the unnamed temporary is invisible while written
  }
  CHECK(names(dir).empty());
  write_file_atomically(target, "old");
  {
    AtomicFileWriter w(target);
    w.append("new, never committed");
  }
  CHECK(read_text_file(target) == "old");
  CHECK(names(dir) == std::set<std::string>{"trace.json"});
  AtomicFileWriter w(target);
  w.append("committed");
  w.commit();
  CHECK_THROWS_AS(w.append("more"), InternalError);
  CHECK(read_text_file(target) == "committed");
  fs::remove_all(dir);
}

TEST_CASE("a temporary left by a killed writer is removed by the next write; a live writer's is kept") {
  const fs::path dir = fresh("stale");
  const fs::path target = dir / "plan.json";
  const std::string stale = "plan.json.tmp." + std::to_string(dead_pid());
  const std::string live = "plan.json.tmp.1";  // pid 1 always runs
  std::ofstream(dir / stale) << "half a plan";
  std::ofstream(dir / live) << "another writer's";
  std::ofstream(dir / "plan.json.tmp.notapid") << "not ours";
  write_file_atomically(target, "{}");
  CHECK(names(dir) == std::set<std::string>{"plan.json", live, "plan.json.tmp.notapid"});
  fs::remove_all(dir);
}

TEST_CASE("inputs that are not plain files of sane size are refused before reading") {
  CHECK_THROWS_WITH_AS((void)read_text_file("/dev/zero"),
                       "/dev/zero: at /: is not a regular file (a device, pipe or socket); allowed: a regular file", InputError);
  const fs::path dir = fresh("inputs");
  CHECK_THROWS_WITH_AS((void)read_text_file(dir), (dir.string() + ": at /: is a directory, expected a file").c_str(), InputError);
  const fs::path fifo = dir / "pipe.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_AS((void)read_text_file(fifo), InputError);  // would block forever if opened
  const fs::path huge = dir / "huge.json";
  { std::ofstream(huge) << "{"; }
  fs::resize_file(huge, (256ull << 20) + 1);  // sparse: no disk used
  CHECK_THROWS_WITH_AS((void)read_text_file(huge),
                       (huge.string() + ": at /: value 268435457 bytes: input file too large; allowed: at most 268435456 bytes (256 MiB)").c_str(),
                       InputError);
  fs::remove_all(dir);
}

TEST_CASE("an output in a folder that does not exist is refused with the path and the reason") {
  const fs::path dir = fresh("nofolder");
  try {
    write_file_atomically(dir / "missing" / "x.json", "x");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == (dir / "missing" / "x.json").string());
    CHECK(std::string(e.what()).find("its folder " + (dir / "missing").string() + " does not exist") != std::string::npos);
  }
  CHECK(names(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("an output never replaces a device, a FIFO, a symbolic link or a folder") {
  const fs::path dir = fresh("special-targets");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
  fs::create_directory(dir / "folder");
  {
    std::ofstream(dir / "target") << "keep";
  }
  fs::create_symlink("target", dir / "link");
  for (const char* name : {"fifo", "folder", "link"}) {
    CAPTURE(name);
    CHECK_THROWS_AS(write_file_atomically(dir / name, "x"), InputError);
    CHECK_THROWS_AS(check_output_path(dir / name), InputError);
  }
  CHECK_THROWS_AS(write_file_atomically("/dev/null", "x"), InputError);
  CHECK(fs::is_fifo(fs::symlink_status(dir / "fifo")));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link")));
  CHECK(fs::is_character_file(fs::status("/dev/null")));
  std::ifstream in(dir / "target");
  std::string kept;
  in >> kept;
  CHECK(kept == "keep");
  CHECK_NOTHROW(check_output_path(dir / "new.json"));
  CHECK_NOTHROW(check_output_path("-"));
  fs::remove_all(dir);
}

TEST_CASE("an OutputBatch checks every path first and puts nothing in place before commit") {
  const fs::path dir = fresh("batch");
  OutputBatch bad;
  bad.expect("--json", (dir / "a.json").string());
  CHECK_THROWS_WITH_AS(bad.expect("--html", (dir / "missing" / "b.html").string()),
                       doctest::Contains("at --html: value "), InputError);
  CHECK_THROWS_WITH_AS(bad.expect("--trace", (dir / "a.json").string()),
                       doctest::Contains("the same file as --json"), InputError);
  {
    OutputBatch batch;
    batch.expect("--json", (dir / "a.json").string());
    batch.expect("--html", (dir / "b.html").string());
    batch.write((dir / "a.json").string(), "{}");
    batch.stream((dir / "b.html").string()).append("<html>");
    CHECK(names(dir).empty());  // written, not yet in place
    // Destroyed without commit (an error on the way): nothing appears.
  }
  CHECK(names(dir).empty());
  OutputBatch batch;
  batch.expect("--json", (dir / "a.json").string());
  CHECK_THROWS_AS(batch.write((dir / "unchecked.json").string(), "x"), InternalError);
  batch.write((dir / "a.json").string(), "{}");
  batch.commit();
  CHECK(names(dir) == std::set<std::string>{"a.json"});
  fs::remove_all(dir);
}
