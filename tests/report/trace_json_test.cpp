// The Chrome trace writer: the fields each phase needs, exact picosecond timestamps, escaping,
// flow arrows bound where Perfetto looks for them, a stable order, the event cap, the atomic file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "../test_paths.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "report/trace_json.hpp"
#include "trace_format.hpp"

using namespace moesim;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kOddName = "attn \"core\" \\path\n\tend\x01";

TimelineEvent op(Timeline& t, std::int32_t process, std::int32_t track, const std::string& name,
                 const std::string& category, std::int64_t start_ps, std::int64_t duration_ps) {
  TimelineEvent e;
  e.process = process;
  e.track = track;
  e.name = t.intern(name);
  e.category = t.intern(category);
  e.start_ps = start_ps;
  e.duration_ps = duration_ps;
  return e;
}

/// Two ranks, three tracks, ten ops (not in time order), one pipeline send → receive arrow.
Timeline sample() {
  Timeline t;
  t.processes = {{"rank 0 (pp 0)", 0, {"compute", "pp comm"}}, {"rank 4 \"last\" stage", 4, {"compute"}}};
  auto add = [&](TimelineEvent e) { t.events.push_back(e); };
  TimelineEvent e = op(t, 0, 0, kOddName, "compute", 0, 1'234'567);
  e.flops = 2e12;
  e.microbatch = 0;
  add(e);                                                                // 0
  e = op(t, 0, 0, "mlp", "compute", 1'234'567, 2'000'000);
  e.flops = 4e12;
  e.bytes = 1048576;
  e.microbatch = 0;
  add(e);                                                                // 1
  e = op(t, 0, 1, "send", "pp_comm", 3'234'567, 500'000);
  e.bytes = 8388608;
  e.microbatch = 0;
  add(e);                                                                // 2
  e = op(t, 1, 0, "recv", "pp_comm", 3'734'567, 100'000);
  e.bytes = 8388608;
  e.microbatch = 0;
  add(e);                                                                // 3
  e = op(t, 1, 0, kOddName, "compute", 3'834'567, 1'234'567);
  e.microbatch = 0;
  add(e);                                                                // 4
  e = op(t, 1, 0, "mlp", "compute", 5'069'134, 3'000'000);
  e.microbatch = 0;
  e.chunk = 1;
  e.backward = true;
  e.flops = 8e12;
  add(e);                                                                // 5
  e = op(t, 0, 0, kOddName, "compute", 3'234'567, 1'000'000);
  e.microbatch = 1;
  add(e);                                                                // 6
  add(op(t, 0, 0, "optimizer", "optimizer", 12'345'678'901'234, 5));     // 7
  add(op(t, 1, 0, "optimizer", "optimizer", 12'345'678'901'234, 5));     // 8
  e = op(t, 0, 1, "dp all-reduce", "dp_comm", 9'000'000, 2'000'000);
  e.bytes = 1e9;
  add(e);                                                                // 9
  t.flows.push_back(TimelineFlow{2, 3, t.intern("pp activation")});
  return t;
}

std::vector<json> phase(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

std::string problems_text(const std::vector<std::string>& problems) {
  std::string s;
  for (const auto& p : problems) s += p + "\n";
  return s;
}

fs::path scratch_dir() {
  const fs::path d = test::binary_dir() / "test-report-scratch";
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("the trace passes the Chrome trace format validator") {
  const json trace = json::parse(report::chrome_trace_text(sample()));
  const auto problems = test::validate_chrome_trace(trace);
  CHECK_MESSAGE(problems.empty(), problems_text(problems));
  CHECK(trace["displayTimeUnit"] == "ns");
  CHECK(trace["otherData"]["generator"] == "moesim");
  CHECK(trace["otherData"]["events"] == 10);
  CHECK(trace["otherData"]["events_dropped"] == 0);
  CHECK_FALSE(trace["otherData"].contains("note"));
  CHECK(phase(trace, "X").size() == 10);
}

TEST_CASE("ts and dur are microseconds with exactly six decimals, from integer picoseconds") {
  const std::string text = report::chrome_trace_text(sample());
  CHECK(text.find("\"ts\":0.000000,\"dur\":1.234567,") != std::string::npos);
  CHECK(text.find("\"ts\":1.234567,\"dur\":2.000000,") != std::string::npos);
  // Past 2^53 ps a double would no longer hold every picosecond; the integer path does.
  CHECK(text.find("\"ts\":12345678.901234,\"dur\":0.000005,") != std::string::npos);
  const json trace = json::parse(text);
  for (const json& e : phase(trace, "X")) {
    if (e["name"] == "mlp" && e["pid"] == 0) {
      CHECK(e["ts"].get<double>() == doctest::Approx(1.234567).epsilon(1e-12));
    }
  }
}

TEST_CASE("processes are ranks and tracks are threads, named and ordered by metadata") {
  const json trace = json::parse(report::chrome_trace_text(sample()));
  std::vector<std::string> seen;
  for (const json& m : phase(trace, "M")) {
    std::string line = m["name"].get<std::string>() + " " + std::to_string(m["pid"].get<int>());
    if (m.contains("tid")) line += "/" + std::to_string(m["tid"].get<int>());
    line += " " + (m["args"].contains("name") ? m["args"]["name"].get<std::string>()
                                              : std::to_string(m["args"]["sort_index"].get<int>()));
    seen.push_back(line);
  }
  const std::vector<std::string> expected{
      "process_name 0 rank 0 (pp 0)", "process_sort_index 0 0", "thread_name 0/1 compute", "thread_sort_index 0/1 0",
      "thread_name 0/2 pp comm",      "thread_sort_index 0/2 1", "process_name 4 rank 4 \"last\" stage",
      "process_sort_index 4 1",       "thread_name 4/1 compute", "thread_sort_index 4/1 0"};
  CHECK(seen == expected);
  // Metadata first: a viewer knows every name before the first slice.
  CHECK(trace["traceEvents"][expected.size()]["ph"] != "M");
}

TEST_CASE("args hold only the fields that apply to the op") {
  const json trace = json::parse(report::chrome_trace_text(sample()));
  int checked = 0;
  for (const json& e : phase(trace, "X")) {
    if (e["name"] == "mlp" && e["pid"] == 4) {
      CHECK(e["args"] == json{{"flops", 8e12}, {"microbatch", 0}, {"chunk", 1}, {"pass", "backward"}});
      ++checked;
    } else if (e["name"] == "mlp") {
      CHECK(e["args"] == json{{"bytes", 1048576}, {"flops", 4e12}, {"microbatch", 0}, {"pass", "forward"}});
      ++checked;
    } else if (e["name"] == "optimizer") {
      CHECK_FALSE(e.contains("args"));  // no micro-batch, no bytes, no FLOPs: nothing to say
      ++checked;
    } else if (e["name"] == "dp all-reduce") {
      CHECK(e["args"] == json{{"bytes", 1e9}});
      CHECK(e["cat"] == "dp_comm");
      ++checked;
    }
  }
  CHECK(checked == 5);
  const std::string text = report::chrome_trace_text(sample());
  CHECK(text.find("\"args\":{\"bytes\":1000000000}") != std::string::npos);  // integral figures print as integers
}

TEST_CASE("a flow arrow starts at the end of the source op and ends bound to the target op") {
  const json trace = json::parse(report::chrome_trace_text(sample()));
  const auto starts = phase(trace, "s");
  const auto ends = phase(trace, "f");
  REQUIRE(starts.size() == 1);
  REQUIRE(ends.size() == 1);
  const json& s = starts[0];
  const json& f = ends[0];
  CHECK(s["id"] == f["id"]);
  CHECK(s["cat"] == f["cat"]);
  CHECK(s["name"] == "pp activation");
  CHECK(f["name"] == "pp activation");
  CHECK(s["cat"] == "pp_comm");
  CHECK(s["pid"] == 0);
  CHECK(s["tid"] == 2);
  CHECK(f["pid"] == 4);
  CHECK(f["tid"] == 1);
  CHECK(f["bp"] == "e");
  const std::string text = report::chrome_trace_text(sample());
  CHECK(text.find("\"ph\":\"s\",\"id\":0,\"ts\":3.734567,\"pid\":0,\"tid\":2}") != std::string::npos);
  CHECK(text.find("\"ph\":\"f\",\"id\":0,\"ts\":3.734567,\"pid\":4,\"tid\":1,\"bp\":\"e\"}") != std::string::npos);
  // Perfetto binds a flow event to the slice open on its track at that point of the stream: the
  // end comes right after the receive slice it enters.
  const auto& events = trace["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i]["ph"] == "f") {
      REQUIRE(i > 0);
      CHECK(events[i - 1]["name"] == "recv");
    }
  }
}

TEST_CASE("names are escaped for JSON and read back unchanged") {
  const std::string text = report::chrome_trace_text(sample());
  CHECK(text.find(R"("name":"attn \"core\" \\path\n\tend\u0001")") != std::string::npos);
  const json trace = json::parse(text);
  int found = 0;
  for (const json& e : phase(trace, "X")) found += e["name"] == kOddName ? 1 : 0;
  CHECK(found == 3);

  Timeline t = sample();
  t.names[t.events[1].name] = std::string("mlp \xC3\xA9 \xFF \xED\xA0\x80 \xF0\x9F\x98\x80");  // é, junk, surrogate, emoji
  const json odd = json::parse(report::chrome_trace_text(t));
  bool seen = false;
  for (const json& e : phase(odd, "X")) {
    if (e["ts"].get<double>() == doctest::Approx(1.234567)) {
      CHECK(e["name"] == "mlp \xC3\xA9 \xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD \xF0\x9F\x98\x80");
      seen = true;
    }
  }
  CHECK(seen);
}

TEST_CASE("the output is deterministic and sorted by (ts, pid, tid), whatever the input order") {
  const Timeline t = sample();
  const std::string a = report::chrome_trace_text(t);
  CHECK(a == report::chrome_trace_text(t));

  // Same ops in reverse order, the flow's indices remapped: the same bytes.
  Timeline r = t;
  std::reverse(r.events.begin(), r.events.end());
  const auto last = static_cast<std::int64_t>(t.events.size()) - 1;
  for (TimelineFlow& f : r.flows) {
    f.from_event = last - f.from_event;
    f.to_event = last - f.to_event;
  }
  CHECK(report::chrome_trace_text(r) == a);

  const json trace = json::parse(a);
  std::vector<std::tuple<double, int, int>> keys;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "M") keys.emplace_back(e["ts"].get<double>(), e["pid"].get<int>(), e["tid"].get<int>());
  }
  CHECK(keys.size() == 12);
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  // Equal ts on two ranks: pid decides.
  const auto x = phase(trace, "X");
  CHECK(x[x.size() - 2]["pid"] == 0);
  CHECK(x[x.size() - 1]["pid"] == 4);
}

TEST_CASE("max_events keeps the first events by time and says how many were dropped") {
  report::TraceOptions capped;
  capped.max_events = 4;
  const json trace = json::parse(report::chrome_trace_text(sample(), capped));
  const auto problems = test::validate_chrome_trace(trace);
  CHECK_MESSAGE(problems.empty(), problems_text(problems));
  const auto x = phase(trace, "X");
  REQUIRE(x.size() == 4);
  CHECK(x[3]["name"] == "send");  // ts 3.234567 on pid 0 tid 2, the 4th op in time
  CHECK(trace["otherData"]["events"] == 4);
  CHECK(trace["otherData"]["events_dropped"] == 6);
  CHECK(trace["otherData"]["flows_dropped"] == 1);  // its receive was dropped, so the arrow goes too
  CHECK(trace["otherData"]["max_events"] == 4);
  CHECK(trace["otherData"]["note"].get<std::string>().find("6 later events") != std::string::npos);
  CHECK(phase(trace, "s").empty());
  CHECK(phase(trace, "M").size() == 10);  // every track is still named

  capped.max_events = 5;  // the receive is now in: the arrow stays
  const json five = json::parse(report::chrome_trace_text(sample(), capped));
  CHECK(phase(five, "s").size() == 1);
  CHECK(five["otherData"]["flows_dropped"] == 0);

  capped.max_events = 10;  // a cap above the count drops nothing
  const json all = json::parse(report::chrome_trace_text(sample(), capped));
  CHECK(all["otherData"]["events_dropped"] == 0);
  CHECK_FALSE(all["otherData"].contains("note"));
}

TEST_CASE("other_data entries are written in order; reserved or repeated keys are refused") {
  report::TraceOptions o;
  o.other_data = {{"scenario", "mixtral \"8x7b\""}, {"seed", "42"}};
  const json trace = json::parse(report::chrome_trace_text(sample(), o));
  CHECK(trace["otherData"]["scenario"] == "mixtral \"8x7b\"");
  CHECK(trace["otherData"]["seed"] == "42");
  o.other_data.push_back({"events", "1"});
  CHECK_THROWS_AS((void)report::chrome_trace_text(sample(), o), InternalError);
  o.other_data = {{"seed", "1"}, {"seed", "2"}};
  CHECK_THROWS_AS((void)report::chrome_trace_text(sample(), o), InternalError);
}

TEST_CASE("an inconsistent timeline is an internal error, not a broken file") {
  const auto refused = [](auto mutate) {
    Timeline t = sample();
    mutate(t);
    CHECK_THROWS_AS((void)report::chrome_trace_text(t), InternalError);
  };
  refused([](Timeline& t) { t.events[0].track = 2; });
  refused([](Timeline& t) { t.events[0].process = 2; });
  refused([](Timeline& t) { t.events[0].name = 999; });
  refused([](Timeline& t) { t.events[0].duration_ps = -1; });
  refused([](Timeline& t) { t.events[0].bytes = std::nan(""); });
  refused([](Timeline& t) { t.flows[0].to_event = 10; });
  refused([](Timeline& t) { t.processes[1].rank = 0; });

  const fs::path out = scratch_dir() / "refused.json";
  fs::remove(out);
  Timeline t = sample();
  t.events[0].duration_ps = -1;
  CHECK_THROWS_AS(report::write_chrome_trace(t, out), InternalError);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("write_chrome_trace writes the same bytes atomically") {
  const fs::path dir = scratch_dir() / "atomic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "trace.json";
  report::write_chrome_trace(sample(), out);
  CHECK(read_text_file(out) == report::chrome_trace_text(sample()));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);  // no temporary left

  CHECK_THROWS_AS(report::write_chrome_trace(sample(), dir / "missing-folder" / "trace.json"), InputError);
}

TEST_CASE("a large trace streams through many chunks and still parses") {
  Timeline t;
  t.processes = {{"rank 0", 0, {"compute", "ep comm"}}, {"rank 1", 1, {"compute", "ep comm"}}};
  const std::uint32_t gemm = t.intern("expert gemm");
  const std::uint32_t a2a = t.intern("all-to-all dispatch");
  const std::uint32_t compute = t.intern("compute");
  const std::uint32_t ep = t.intern("ep_comm");
  constexpr int kOps = 40'000;  // about 6 MB of text: several 1 MiB chunks
  for (int i = 0; i < kOps; ++i) {
    TimelineEvent e;
    e.process = i % 2;
    e.track = (i / 2) % 2;
    const bool comm = e.track == 1;
    e.name = comm ? a2a : gemm;
    e.category = comm ? ep : compute;
    e.start_ps = std::int64_t{i / 4} * 1'000'003;
    e.duration_ps = 999'999;
    (comm ? e.bytes : e.flops) = 1.5e9 + i;
    e.microbatch = i % 8;
    t.events.push_back(e);
  }
  for (int i = 0; i + 5 < kOps; i += 1000) t.flows.push_back(TimelineFlow{i + 2, i + 5, a2a});

  const fs::path out = scratch_dir() / "large.json";
  report::write_chrome_trace(t, out);
  const std::string text = read_text_file(out);
  CHECK(text.size() > 4u * 1024 * 1024);
  CHECK(text == report::chrome_trace_text(t));
  const json trace = json::parse(text);
  const auto problems = test::validate_chrome_trace(trace);
  CHECK_MESSAGE(problems.empty(), problems_text(problems));
  CHECK(phase(trace, "X").size() == kOps);
  CHECK(phase(trace, "s").size() == t.flows.size());
}

TEST_CASE("AtomicFileWriter: nothing appears without commit, everything with it") {
  const fs::path dir = scratch_dir() / "writer";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out.txt";
  {
    AtomicFileWriter w(out);
    w.append("half");
  }  // destroyed without commit, as when an exception unwinds
  CHECK_FALSE(fs::exists(out));
  CHECK(fs::is_empty(dir));

  write_file_atomically(out, "old");
  {
    AtomicFileWriter w(out);
    w.append("new ");
    CHECK(read_text_file(out) == "old");  // readers see the old file until commit
    w.append("content");
    w.commit();
    CHECK_THROWS_AS(w.append("more"), InternalError);
  }
  CHECK(read_text_file(out) == "new content");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  CHECK_THROWS_AS(AtomicFileWriter(dir / "no" / "such" / "file"), InputError);
}

TEST_CASE("the validator reports what a viewer would choke on") {
  const json good = json::parse(report::chrome_trace_text(sample()));
  const auto broken = [&](auto mutate) {
    json t = good;
    mutate(t["traceEvents"]);
    return test::validate_chrome_trace(t);
  };
  const auto index_of = [&](const std::string& ph) {
    const auto& ev = good["traceEvents"];
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (ev[i]["ph"] == ph) return i;
    }
    return std::size_t{0};
  };
  CHECK(test::validate_chrome_trace(json::array()).size() == 1);
  CHECK_FALSE(broken([&](json& ev) { ev[index_of("X")].erase("dur"); }).empty());
  CHECK_FALSE(broken([&](json& ev) { ev[index_of("X")]["tid"] = "1"; }).empty());
  CHECK_FALSE(broken([&](json& ev) { ev[index_of("f")].erase("bp"); }).empty());
  CHECK_FALSE(broken([&](json& ev) { ev[index_of("s")]["id"] = 7; }).empty());           // unpaired
  CHECK_FALSE(broken([&](json& ev) { ev[index_of("s")]["ts"] = 100.0; }).empty());       // outside any slice
  CHECK_FALSE(broken([&](json& ev) { ev[index_of("M")]["args"].erase("name"); }).empty());
  CHECK_FALSE(broken([&](json& ev) { ev[index_of("M")]["name"] = "process_nam"; }).empty());
  CHECK_FALSE(broken([&](json& ev) { ev.push_back(json{{"ph", "B"}, {"name", "x"}}); }).empty());
  CHECK_FALSE(broken([&](json& ev) {  // a slice on a track no thread_name names
    json x = ev[index_of("X")];
    x["tid"] = 9;
    ev.push_back(x);
  }).empty());
}
