#pragma once
// validate_chrome_trace: checks a parsed trace against the Trace Event Format (JSON Object Format)
// as moesim writes it, so any test holding a trace (the writer's, the simulator's) can call it.
// It checks
//  - the shape: an object with a "traceEvents" array, "displayTimeUnit" "ms" or "ns" if present,
//    "otherData" an object if present;
//  - the fields each phase requires: X (name, ph, ts, dur >= 0, pid, tid), M (a known metadata name
//    with its args.name or args.sort_index), s/f (id, ts, pid, tid, cat, name; "bp":"e" on f, which
//    is how moesim binds a flow end to the slice it enters);
//  - moesim's conventions that viewers depend on: every slice's process and track are named, every
//    flow id has exactly one start and one end, and each flow end point lies inside a slice on its
//    track (else Perfetto drops the arrow).
// It returns one line per problem (at most kMaxProblems, then a count), empty when the trace is fine.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace moesim::test {

namespace trace_format_detail {

using Json = nlohmann::json;
constexpr std::size_t kMaxProblems = 50;
// ts and dur are parsed back as doubles (µs); an end point equal to a slice's end in picoseconds
// may differ from ts + dur by rounding, so containment allows half a picosecond.
constexpr double kSlackUs = 0.5e-6;

class Problems {
 public:
  void add(std::size_t index, const std::string& what) {
    ++count_;
    if (lines_.size() < kMaxProblems) lines_.push_back("traceEvents[" + std::to_string(index) + "]: " + what);
  }
  void add(const std::string& what) {
    ++count_;
    if (lines_.size() < kMaxProblems) lines_.push_back(what);
  }
  std::vector<std::string> take() {
    if (count_ > lines_.size()) lines_.push_back("... and " + std::to_string(count_ - lines_.size()) + " more");
    return std::move(lines_);
  }

 private:
  std::vector<std::string> lines_;
  std::size_t count_ = 0;
};

inline bool is_int(const Json& e, const char* key) { return e.contains(key) && e[key].is_number_integer(); }
inline bool is_num(const Json& e, const char* key) { return e.contains(key) && e[key].is_number(); }
inline bool is_str(const Json& e, const char* key) { return e.contains(key) && e[key].is_string(); }

using Thread = std::pair<std::int64_t, std::int64_t>;  // (pid, tid)

struct Seen {
  std::set<std::int64_t> named_processes;
  std::set<Thread> named_threads;
  std::map<Thread, std::vector<std::pair<double, double>>> slices;  // [ts, ts + dur] per track
  std::set<Thread> slice_threads;
  // flow (id, cat, name) -> (starts, ends); each end point kept with its index for the message
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int, int>> flows;
  std::vector<std::tuple<std::size_t, Thread, double>> flow_points;
};

inline Thread thread_of(const Json& e) { return {e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()}; }

inline void check_complete(const Json& e, std::size_t i, Problems& p, Seen& seen) {
  if (!is_str(e, "name")) p.add(i, "X event without a string \"name\"");
  if (!is_num(e, "ts")) p.add(i, "X event without a numeric \"ts\"");
  if (!is_num(e, "dur")) p.add(i, "X event without a numeric \"dur\"");
  if (!is_int(e, "pid") || !is_int(e, "tid")) p.add(i, "X event without integer \"pid\" and \"tid\"");
  if (e.contains("cat") && !e["cat"].is_string()) p.add(i, "X event with a non-string \"cat\"");
  if (e.contains("args") && !e["args"].is_object()) p.add(i, "X event with non-object \"args\"");
  if (!is_num(e, "ts") || !is_num(e, "dur") || !is_int(e, "pid") || !is_int(e, "tid")) return;
  const double ts = e["ts"].get<double>();
  const double dur = e["dur"].get<double>();
  if (dur < 0) p.add(i, "X event with a negative \"dur\"");
  seen.slices[thread_of(e)].emplace_back(ts, ts + dur);
  seen.slice_threads.insert(thread_of(e));
}

inline void check_metadata(const Json& e, std::size_t i, Problems& p, Seen& seen) {
  static const std::set<std::string> kNames{"process_name", "process_labels", "process_sort_index",
                                            "thread_name", "thread_sort_index"};
  const std::string name = is_str(e, "name") ? e["name"].get<std::string>() : "";
  if (!kNames.count(name)) {
    p.add(i, "M event with unknown name \"" + name + "\"");
    return;
  }
  if (!is_int(e, "pid")) p.add(i, "M event without an integer \"pid\"");
  const bool thread = name.rfind("thread_", 0) == 0;
  if (thread && !is_int(e, "tid")) p.add(i, name + " without an integer \"tid\"");
  if (!e.contains("args") || !e["args"].is_object()) {
    p.add(i, name + " without an \"args\" object");
    return;
  }
  const Json& args = e["args"];
  if (name == "process_name" || name == "thread_name") {
    if (!is_str(args, "name")) p.add(i, name + " without a string args.name");
  } else if (name == "process_labels") {
    if (!is_str(args, "labels")) p.add(i, name + " without a string args.labels");
  } else if (!is_int(args, "sort_index")) {
    p.add(i, name + " without an integer args.sort_index");
  }
  if (!is_int(e, "pid")) return;
  if (name == "process_name") seen.named_processes.insert(e["pid"].get<std::int64_t>());
  if (name == "thread_name" && is_int(e, "tid")) seen.named_threads.insert(thread_of(e));
}

inline void check_flow(const Json& e, std::size_t i, Problems& p, Seen& seen) {
  const std::string ph = e["ph"].get<std::string>();
  const bool id_ok = e.contains("id") && (e["id"].is_number_integer() || e["id"].is_string());
  if (!id_ok) p.add(i, ph + " event without an integer or string \"id\"");
  if (!is_num(e, "ts")) p.add(i, ph + " event without a numeric \"ts\"");
  if (!is_int(e, "pid") || !is_int(e, "tid")) p.add(i, ph + " event without integer \"pid\" and \"tid\"");
  if (!is_str(e, "cat")) p.add(i, ph + " event without a string \"cat\"");
  if (!is_str(e, "name")) p.add(i, ph + " event without a string \"name\"");
  if (ph == "f" && !(is_str(e, "bp") && e["bp"] == "e")) p.add(i, "f event without \"bp\":\"e\"");
  if (!id_ok || !is_num(e, "ts") || !is_int(e, "pid") || !is_int(e, "tid") || !is_str(e, "cat") || !is_str(e, "name"))
    return;
  auto& counts = seen.flows[{e["id"].dump(), e["cat"].get<std::string>(), e["name"].get<std::string>()}];
  (ph == "s" ? counts.first : counts.second) += 1;
  seen.flow_points.emplace_back(i, thread_of(e), e["ts"].get<double>());
}

inline void check_cross_references(Seen& seen, Problems& p) {
  for (const Thread& t : seen.slice_threads) {
    if (!seen.named_processes.count(t.first)) p.add("pid " + std::to_string(t.first) + " has slices but no process_name");
    if (!seen.named_threads.count(t))
      p.add("pid " + std::to_string(t.first) + " tid " + std::to_string(t.second) + " has slices but no thread_name");
  }
  for (const auto& [key, counts] : seen.flows) {
    if (counts.first != 1 || counts.second != 1)
      p.add("flow id " + std::get<0>(key) + " (cat \"" + std::get<1>(key) + "\") has " + std::to_string(counts.first) +
            " starts and " + std::to_string(counts.second) + " ends; expected one of each");
  }
  for (const auto& [index, thread, ts] : seen.flow_points) {
    bool inside = false;
    for (const auto& [start, end] : seen.slices[thread]) {
      if (start - kSlackUs <= ts && ts <= end + kSlackUs) {
        inside = true;
        break;
      }
    }
    if (!inside) p.add(index, "flow event lies inside no slice of its track, so viewers cannot attach it");
  }
}

}  // namespace trace_format_detail

/// Problems of `trace` as a Chrome trace written by moesim; empty when there are none.
inline std::vector<std::string> validate_chrome_trace(const nlohmann::json& trace) {
  using namespace trace_format_detail;
  Problems p;
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    p.add("not an object with a \"traceEvents\" array (JSON Object Format)");
    return p.take();
  }
  if (trace.contains("displayTimeUnit") && trace["displayTimeUnit"] != "ms" && trace["displayTimeUnit"] != "ns")
    p.add("\"displayTimeUnit\" must be \"ms\" or \"ns\"");
  if (trace.contains("otherData") && !trace["otherData"].is_object()) p.add("\"otherData\" must be an object");
  Seen seen;
  const Json& events = trace["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    if (!e.is_object() || !is_str(e, "ph")) {
      p.add(i, "not an object with a string \"ph\"");
      continue;
    }
    const std::string ph = e["ph"].get<std::string>();
    if (ph == "X") {
      check_complete(e, i, p, seen);
    } else if (ph == "M") {
      check_metadata(e, i, p, seen);
    } else if (ph == "s" || ph == "f") {
      check_flow(e, i, p, seen);
    } else {
      p.add(i, "phase \"" + ph + "\" is not one moesim writes (X, M, s, f)");
    }
  }
  check_cross_references(seen, p);
  return p.take();
}

}  // namespace moesim::test
