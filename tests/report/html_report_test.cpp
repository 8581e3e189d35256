// The HTML report writer without a browser (tests/report_html/ renders the pages): what it refuses,
// how it keeps inline scripts inert, and the bounded timeline digest.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "report/html_report.hpp"
#include "report/html_util.hpp"
#include "report/report_assets.hpp"
#include "report/timeline_digest.hpp"

using namespace moesim;

TEST_CASE("inline scripts cannot be closed early and carry no literal URL") {
  CHECK(report::script_safe(R"({"a":"</script><b>"})") == R"({"a":"<\/script><b>"})");
  CHECK(report::script_safe(R"(x="http://www.w3.org/2000/svg")") == R"(x="http:\/\/www.w3.org/2000/svg")");
  CHECK(report::script_safe("a://b://") == R"(a:\/\/b:\/\/)");
}

TEST_CASE("a report renders only a result, a plan or a validation") {
  CHECK_THROWS_WITH_AS((void)report::json_document_to_html(nlohmann::json{{"schema", "moesim.skew/1"}}),
                       doctest::Contains("moesim.result/1, moesim.plan/1, moesim.validation/1"), InputError);
  // A document read from a file names the file in its error.
  CHECK_THROWS_WITH_AS((void)report::file_document_to_html(nlohmann::json{{"schema", "moesim.skew/1"}}, "x.json"),
                       doctest::Contains("x.json: at /"), InputError);
}

TEST_CASE("a missing ECharts is an input error that says how to get it") {
  CHECK_THROWS_WITH_AS((void)report::report_asset("echarts/dist/not-there.js"), doctest::Contains("npm"), InputError);
  CHECK(report::echarts_version() == "6.1.0");
}

TEST_CASE("the timeline digest keeps the last-finishing ranks and merges ops past its bound") {
  Timeline t;
  for (int p = 0; p < 3; ++p) t.processes.push_back({"rank " + std::to_string(p), p, {"compute"}});
  const auto op = t.intern("gemm"), cat = t.intern("compute");
  // Rank 1 finishes last; each rank runs 100 back-to-back ops of 10 ns.
  for (int p = 0; p < 3; ++p) {
    for (int i = 0; i < 100; ++i) {
      t.events.push_back({p, 0, op, cat, i * 10000 + (p == 1 ? 5000 : 0), 10000, 0, 1e6, 0, -1, false});
    }
  }
  report::TimelineDigestLimits limits;
  limits.max_processes = 1;
  limits.max_events = 10;
  const auto d = report::timeline_digest(t, limits);
  REQUIRE(d["processes"].size() == 1);
  CHECK(d["processes"][0]["rank"] == 1);
  CHECK(d["events_total"] == 100);
  CHECK(d["events"].size() <= 10);
  // Back-to-back ops merge into one block holding all of them and their FLOPs.
  CHECK(d["events"][0][10] == 100);
  CHECK(d["events"][0][7].get<double>() == doctest::Approx(1e8));
  CHECK(d["events_shown"] == 100);
}
