// Chrome Trace Event Format writer. The text is produced by hand with fmt into a buffer handed on
// in chunks of about 1 MiB: an nlohmann::json tree of a million-event trace would need gigabytes.
// Format reference: "Trace Event Format" (Google, JSON Object Format; phases X, M, s, f).
#include "report/trace_json.hpp"

#include <algorithm>
#include <cmath>
#include <compare>
#include <functional>
#include <iterator>
#include <limits>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"

namespace moesim::report {
namespace {

using Sink = std::function<void(std::string_view)>;

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
constexpr std::int64_t kPsPerUs = 1'000'000;
// Keys the writer puts in otherData itself; TraceOptions::other_data may not repeat them.
constexpr std::string_view kReservedKeys[] = {"generator", "clock", "events", "events_dropped",
                                              "flows", "flows_dropped", "max_events", "note"};

[[noreturn]] void bad_timeline(const std::string& what) { throw InternalError("timeline for the trace: " + what); }

// ---------------------------------------------------------------------------------------------
// Checks: a bad index would otherwise read out of bounds; the simulator is the one to blame.

void check_processes(const Timeline& t) {
  std::set<std::int64_t> ranks;
  for (const TimelineProcess& p : t.processes) {
    // Two processes with one pid would be merged silently by every viewer.
    if (!ranks.insert(p.rank).second) bad_timeline(fmt::format("two processes with rank {}", p.rank));
  }
}

void check_event(const Timeline& t, std::size_t i) {
  const TimelineEvent& e = t.events[i];
  if (e.process < 0 || static_cast<std::size_t>(e.process) >= t.processes.size())
    bad_timeline(fmt::format("event {}: process {} out of range", i, e.process));
  const auto& tracks = t.processes[static_cast<std::size_t>(e.process)].tracks;
  if (e.track < 0 || static_cast<std::size_t>(e.track) >= tracks.size())
    bad_timeline(fmt::format("event {}: track {} out of range", i, e.track));
  if (e.name >= t.names.size() || e.category >= t.names.size())
    bad_timeline(fmt::format("event {}: name or category index out of range", i));
  if (e.duration_ps < 0) bad_timeline(fmt::format("event {}: negative duration {} ps", i, e.duration_ps));
  if (e.start_ps > std::numeric_limits<std::int64_t>::max() - e.duration_ps)
    bad_timeline(fmt::format("event {}: end time overflows", i));
  if (!std::isfinite(e.bytes) || e.bytes < 0 || !std::isfinite(e.flops) || e.flops < 0)
    bad_timeline(fmt::format("event {}: bytes or flops negative or not finite", i));
}

void check_flow(const Timeline& t, std::size_t k) {
  const TimelineFlow& f = t.flows[k];
  const auto n = static_cast<std::int64_t>(t.events.size());
  if (f.from_event < 0 || f.from_event >= n || f.to_event < 0 || f.to_event >= n)
    bad_timeline(fmt::format("flow {}: event index out of range", k));
  if (f.name >= t.names.size()) bad_timeline(fmt::format("flow {}: name index out of range", k));
}

void check_timeline(const Timeline& t) {
  check_processes(t);
  for (std::size_t i = 0; i < t.events.size(); ++i) check_event(t, i);
  for (std::size_t k = 0; k < t.flows.size(); ++k) check_flow(t, k);
}

void check_options(const TraceOptions& o) {
  if (o.max_events < 0) throw InternalError("TraceOptions::max_events is negative");
  std::set<std::string_view> seen(std::begin(kReservedKeys), std::end(kReservedKeys));
  for (const auto& [key, value] : o.other_data) {
    if (!seen.insert(key).second) throw InternalError("TraceOptions::other_data: key used twice: " + key);
  }
}

// ---------------------------------------------------------------------------------------------
// Text pieces.

/// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlong forms, no
/// surrogates, nothing past U+10FFFF), 0 when there is none. JSON must be valid UTF-8, and
/// Perfetto rejects a file that is not.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

/// `s` as a JSON string literal with its quotes; an invalid UTF-8 byte becomes U+FFFD, as
/// result_json does, so one odd label does not make the whole trace unreadable.
std::string json_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_length(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

/// Picoseconds as microseconds (the format's unit) with exactly 6 decimals, by integer arithmetic:
/// a double would lose picoseconds past 2^53 ps (2.5 hours) and print rounding noise.
void append_us(std::string& out, std::int64_t ps) {
  const bool negative = ps < 0;
  const std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(ps) : static_cast<std::uint64_t>(ps);
  const auto per_us = static_cast<std::uint64_t>(kPsPerUs);
  fmt::format_to(std::back_inserter(out), "{}{}.{:06}", negative ? "-" : "", mag / per_us, mag % per_us);
}

/// Shortest round-trip form ("1048576", "1.5e+20"): deterministic, exact, valid JSON.
void append_number(std::string& out, double v) { fmt::format_to(std::back_inserter(out), "{}", v); }

/// `"args":{...}` with only the fields that apply to this op; nothing when none does.
void append_args(std::string& out, const TimelineEvent& e) {
  bool open = false;
  const auto field = [&](std::string_view key) {
    out += open ? "," : ",\"args\":{";
    open = true;
    fmt::format_to(std::back_inserter(out), "\"{}\":", key);
  };
  if (e.bytes != 0) {
    field("bytes");
    append_number(out, e.bytes);
  }
  if (e.flops != 0) {
    field("flops");
    append_number(out, e.flops);
  }
  if (e.microbatch >= 0) {
    field("microbatch");
    fmt::format_to(std::back_inserter(out), "{}", e.microbatch);
  }
  if (e.chunk >= 0) {
    field("chunk");
    fmt::format_to(std::back_inserter(out), "{}", e.chunk);
  }
  // Ops outside any micro-batch (optimizer, DP sync) are neither forward nor backward.
  if (e.microbatch >= 0 || e.backward) {
    field("pass");
    out += e.backward ? "\"backward\"" : "\"forward\"";
  }
  if (open) out += '}';
}

// ---------------------------------------------------------------------------------------------
// Order. Events go out sorted by (ts, pid, tid). Within that, the order is chosen for Perfetto's
// flow binding: it attaches a flow event to the topmost slice open on its track at that point of
// the (time-sorted, otherwise file-ordered) stream. So a flow start at a slice's end comes before
// any slice that starts at that instant on the track (rank 0), while a flow end, and the start of a
// zero-length slice's flow, comes right after its own slice (rank 1, same slice fields).

struct Key {
  std::int64_t ts = 0;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  int rank = 1;
  std::int64_t neg_dur = 0;  // longer first: an enclosing slice precedes the slices it encloses
  std::int64_t event = 0;    // input index: a total order, independent of the sort algorithm
  std::int64_t flow = -1;    // -1 for the slice itself
  auto operator<=>(const Key&) const = default;
};

class Ordering {
 public:
  explicit Ordering(const Timeline& t) : t_(t) {
    pids_.reserve(t.processes.size());
    for (const TimelineProcess& p : t.processes) pids_.push_back(p.rank);
  }

  [[nodiscard]] std::int64_t pid(const TimelineEvent& e) const { return pids_[static_cast<std::size_t>(e.process)]; }

  [[nodiscard]] Key slice(std::size_t i) const {
    const TimelineEvent& e = t_.events[i];
    return Key{e.start_ps, pid(e), std::int64_t{e.track} + 1, 1, -e.duration_ps, static_cast<std::int64_t>(i), -1};
  }

  [[nodiscard]] Key flow_start(std::size_t k) const {
    const auto src = static_cast<std::size_t>(t_.flows[k].from_event);
    Key key = slice(src);
    key.flow = static_cast<std::int64_t>(k);
    const TimelineEvent& e = t_.events[src];
    if (e.duration_ps > 0) {
      key.ts = e.start_ps + e.duration_ps;
      key.rank = 0;
      key.neg_dur = 0;
    }
    return key;
  }

  [[nodiscard]] Key flow_end(std::size_t k) const {
    Key key = slice(static_cast<std::size_t>(t_.flows[k].to_event));
    key.flow = static_cast<std::int64_t>(k);
    return key;
  }

 private:
  const Timeline& t_;
  std::vector<std::int64_t> pids_;
};

/// Indices of the events to write, sorted; the first `cap` by time when capped.
std::vector<std::size_t> selected_events(const Timeline& t, const Ordering& ord, std::int64_t cap) {
  std::vector<std::size_t> order(t.events.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto before = [&](std::size_t a, std::size_t b) { return ord.slice(a) < ord.slice(b); };
  if (cap > 0 && static_cast<std::size_t>(cap) < order.size()) {
    // Selecting before sorting keeps a capped million-event trace at O(n) + O(cap log cap).
    const auto keep = static_cast<std::ptrdiff_t>(cap);
    std::nth_element(order.begin(), order.begin() + keep, order.end(), before);
    order.resize(static_cast<std::size_t>(cap));
  }
  std::sort(order.begin(), order.end(), before);
  return order;
}

struct FlowPoint {
  Key key;
  std::size_t flow = 0;
  bool start = false;
};

/// Both ends of every flow whose two events were kept, sorted.
std::vector<FlowPoint> selected_flow_points(const Timeline& t, const Ordering& ord,
                                            const std::vector<std::size_t>& events) {
  std::vector<char> kept(t.events.size(), 0);
  for (std::size_t i : events) kept[i] = 1;
  std::vector<FlowPoint> points;
  for (std::size_t k = 0; k < t.flows.size(); ++k) {
    const TimelineFlow& f = t.flows[k];
    if (!kept[static_cast<std::size_t>(f.from_event)] || !kept[static_cast<std::size_t>(f.to_event)]) continue;
    points.push_back(FlowPoint{ord.flow_start(k), k, true});
    points.push_back(FlowPoint{ord.flow_end(k), k, false});
  }
  std::sort(points.begin(), points.end(), [](const FlowPoint& a, const FlowPoint& b) { return a.key < b.key; });
  return points;
}

// ---------------------------------------------------------------------------------------------
// Writing.

class TraceWriter {
 public:
  TraceWriter(const Timeline& t, const TraceOptions& o, Sink sink) : t_(t), o_(o), ord_(t), sink_(std::move(sink)) {
    names_.reserve(t.names.size());
    for (const std::string& n : t.names) names_.push_back(json_string(n));  // names repeat: escape once
    buf_.reserve(kChunkBytes + 4096);
  }

  void write() {
    const std::vector<std::size_t> events = selected_events(t_, ord_, o_.max_events);
    const std::vector<FlowPoint> flows = selected_flow_points(t_, ord_, events);
    buf_ += "{\"traceEvents\":[";
    write_metadata();
    std::size_t f = 0;
    for (std::size_t i : events) {
      const Key key = ord_.slice(i);
      for (; f < flows.size() && flows[f].key < key; ++f) write_flow(flows[f]);
      write_slice(i);
    }
    for (; f < flows.size(); ++f) write_flow(flows[f]);
    buf_ += "\n],\"displayTimeUnit\":\"ns\",\"otherData\":";
    write_other_data(events.size(), flows.size() / 2);
    buf_ += "}\n";
    flush();
  }

 private:
  /// Starts one element of traceEvents; hands the buffer on once it holds a chunk.
  void begin_event() {
    if (buf_.size() >= kChunkBytes) flush();
    buf_ += first_ ? "\n" : ",\n";
    first_ = false;
  }

  void flush() {
    if (buf_.empty()) return;
    sink_(buf_);
    buf_.clear();
  }

  void metadata(std::string_view name, std::int64_t pid, const std::int64_t* tid, std::string_view arg,
                const std::string& value) {
    begin_event();
    fmt::format_to(std::back_inserter(buf_), "{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{}", name, pid);
    if (tid != nullptr) fmt::format_to(std::back_inserter(buf_), ",\"tid\":{}", *tid);
    fmt::format_to(std::back_inserter(buf_), ",\"args\":{{\"{}\":{}}}}}", arg, value);
  }

  /// Names and display order of every process and track, written first so that a viewer knows
  /// them before the first slice (and even for a track every event of which was capped away).
  void write_metadata() {
    for (std::size_t p = 0; p < t_.processes.size(); ++p) {
      const TimelineProcess& proc = t_.processes[p];
      metadata("process_name", proc.rank, nullptr, "name", json_string(proc.name));
      metadata("process_sort_index", proc.rank, nullptr, "sort_index", std::to_string(p));
      for (std::size_t k = 0; k < proc.tracks.size(); ++k) {
        const auto tid = static_cast<std::int64_t>(k) + 1;  // tid 0 is often read as "the process"
        metadata("thread_name", proc.rank, &tid, "name", json_string(proc.tracks[k]));
        metadata("thread_sort_index", proc.rank, &tid, "sort_index", std::to_string(k));
      }
    }
  }

  void write_slice(std::size_t i) {
    const TimelineEvent& e = t_.events[i];
    begin_event();
    buf_ += "{\"name\":";
    buf_ += names_[e.name];
    buf_ += ",\"cat\":";
    buf_ += names_[e.category];
    buf_ += ",\"ph\":\"X\",\"ts\":";
    append_us(buf_, e.start_ps);
    buf_ += ",\"dur\":";
    append_us(buf_, e.duration_ps);
    fmt::format_to(std::back_inserter(buf_), ",\"pid\":{},\"tid\":{}", ord_.pid(e), std::int64_t{e.track} + 1);
    append_args(buf_, e);
    buf_ += '}';
  }

  /// "s" at the end of the source slice, "f" bound ("bp":"e") to the enclosing target slice at its
  /// start; id, cat and name together identify the arrow, so both ends carry the same three.
  void write_flow(const FlowPoint& point) {
    const TimelineFlow& f = t_.flows[point.flow];
    const TimelineEvent& src = t_.events[static_cast<std::size_t>(f.from_event)];
    begin_event();
    buf_ += "{\"name\":";
    buf_ += names_[f.name];
    buf_ += ",\"cat\":";
    buf_ += names_[src.category];
    fmt::format_to(std::back_inserter(buf_), ",\"ph\":\"{}\",\"id\":{},\"ts\":", point.start ? "s" : "f", point.flow);
    append_us(buf_, point.key.ts);
    fmt::format_to(std::back_inserter(buf_), ",\"pid\":{},\"tid\":{}", point.key.pid, point.key.tid);
    if (!point.start) buf_ += ",\"bp\":\"e\"";
    buf_ += '}';
  }

  void write_other_data(std::size_t events, std::size_t flows) {
    const std::size_t events_dropped = t_.events.size() - events;
    const std::size_t flows_dropped = t_.flows.size() - flows;
    fmt::format_to(std::back_inserter(buf_),
                   "{{\"generator\":\"moesim\",\"clock\":\"simulated time from the start of the step; ts and dur "
                   "in microseconds with picosecond resolution\",\"events\":{},\"events_dropped\":{},"
                   "\"flows\":{},\"flows_dropped\":{}",
                   events, events_dropped, flows, flows_dropped);
    if (o_.max_events > 0) fmt::format_to(std::back_inserter(buf_), ",\"max_events\":{}", o_.max_events);
    if (events_dropped > 0) {
      const std::string note = fmt::format(
          "trace capped at max_events = {}: the first {} of {} events by start time are kept; {} later events "
          "and {} flow arrows touching them are left out",
          o_.max_events, events, t_.events.size(), events_dropped, flows_dropped);
      buf_ += ",\"note\":";
      buf_ += json_string(note);
    }
    for (const auto& [key, value] : o_.other_data) {
      buf_ += ',';
      buf_ += json_string(key);
      buf_ += ':';
      buf_ += json_string(value);
    }
    buf_ += '}';
  }

  const Timeline& t_;
  const TraceOptions& o_;
  Ordering ord_;
  Sink sink_;
  std::vector<std::string> names_;  // JSON literals of Timeline::names
  std::string buf_;
  bool first_ = true;
};

void stream_chrome_trace(const Timeline& timeline, const TraceOptions& options, Sink sink) {
  check_timeline(timeline);
  check_options(options);
  TraceWriter(timeline, options, std::move(sink)).write();
}

}  // namespace

std::string chrome_trace_text(const Timeline& timeline, const TraceOptions& options) {
  std::string text;
  stream_chrome_trace(timeline, options, [&](std::string_view chunk) { text.append(chunk); });
  return text;
}

void write_chrome_trace(const Timeline& timeline, const std::filesystem::path& out, const TraceOptions& options) {
  // Checked before the file is created, so a bad timeline leaves no temporary file behind.
  check_timeline(timeline);
  check_options(options);
  AtomicFileWriter file(out);
  append_chrome_trace(timeline, file, options);
  file.commit();
}

void append_chrome_trace(const Timeline& timeline, AtomicFileWriter& file, const TraceOptions& options) {
  check_timeline(timeline);
  check_options(options);
  TraceWriter(timeline, options, [&](std::string_view chunk) { file.append(chunk); }).write();
}

}  // namespace moesim::report
