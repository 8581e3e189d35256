#pragma once
// The self-contained HTML report of a result (moesim.result/1) or a plan (moesim.plan/1): one file
// with inline CSS, the pinned Apache ECharts inlined, the document's JSON embedded and rendered by
// reports/assets/report.js — no network fetch, readable when printed (docs/reports.md). The page is
// drawn from the JSON the writers produce, so `moesim report IN.json` and `--html` give the same page.
#include <string>

#include <nlohmann/json.hpp>

#include "hw/tier_graph.hpp"
#include "record/result.hpp"
#include "record/timeline.hpp"

namespace moesim::report {

struct HtmlExtras {
  const Timeline* timeline = nullptr;  ///< a simulated step's timeline (simulate --html): the timeline chart
  std::string trace_href;              ///< relative link to the Perfetto trace written beside the page, if any
  const hw::TierGraph* topology = nullptr;  ///< the cluster's domains and switches: the topology graph
};

/// Throws the InputError of a build without ECharts (report_assets.hpp): call it before long work
/// whose only output would be the page.
void require_html_support();

/// Page of a result (`moesim simulate --html`).
[[nodiscard]] std::string result_to_html(const Result& r, const HtmlExtras& extras = {});

/// Page of a moesim.result/1 or moesim.plan/1 document. Throws InputError for another schema.
[[nodiscard]] std::string json_document_to_html(const nlohmann::json& doc, const HtmlExtras& extras = {});

/// `moesim report A.json B.json`: two results or plans (a plan stands for its winner) side by side: the
/// figures, the breakdowns, memory, and every scenario field that differs. The labels (the files'
/// paths) name the sides and the file of an InputError.
[[nodiscard]] std::string comparison_to_html(const nlohmann::json& left, const std::string& left_label,
                                             const nlohmann::json& right, const std::string& right_label);

/// `moesim report IN.json`: a document read from `path` (parsed strictly by config::parse_json_text, so
/// its nesting is bounded), rendered; errors name `path`.
[[nodiscard]] std::string file_document_to_html(const nlohmann::json& doc, const std::string& path,
                                                const HtmlExtras& extras = {});

}  // namespace moesim::report
