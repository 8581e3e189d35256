#pragma once
// Chrome Trace Event Format writer (JSON Object Format) of a simulated step: the file Perfetto
// (ui.perfetto.dev) and chrome://tracing open. docs/trace.md describes what it contains.
// Streams: a trace of millions of events is written in chunks, never held as one JSON tree.
// Deterministic: the same Timeline and options give byte-identical text.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/file_io.hpp"
#include "record/timeline.hpp"

namespace moesim::report {

struct TraceOptions {
  /// Keep only the first `max_events` complete events by (ts, pid, tid); 0 keeps all. Viewers slow
  /// down past a few million events. What was dropped is counted in otherData.
  std::int64_t max_events = 0;
  /// Extra string entries for otherData, in this order (e.g. {"scenario", name}, {"seed", "42"}).
  /// A key the writer sets itself (see docs/trace.md) or a repeated key is an InternalError.
  std::vector<std::pair<std::string, std::string>> other_data;
};

/// The trace as text (tests; small traces). Throws InternalError on an inconsistent Timeline
/// (an index out of range, a negative duration, a non-finite figure, two processes with one rank).
[[nodiscard]] std::string chrome_trace_text(const Timeline& timeline, const TraceOptions& options = {});

/// Streams the trace to `out` through a temporary file renamed into place (core/file_io.hpp), so a
/// crash never leaves a truncated trace. Throws InputError when `out` cannot be written.
void write_chrome_trace(const Timeline& timeline, const std::filesystem::path& out,
                        const TraceOptions& options = {});

/// Streams the trace into `file` without committing it: a command commits it with its other outputs
/// (OutputBatch), so a later failure leaves no trace behind either.
void append_chrome_trace(const Timeline& timeline, AtomicFileWriter& file, const TraceOptions& options = {});

}  // namespace moesim::report
