#pragma once
// The plan's self-contained HTML report (`moesim plan --html`, `moesim merge --html`): the
// moesim.plan/1 document drawn by the shared report page (html_report.hpp, docs/reports.md).
#include <string>

#include "report/html_report.hpp"
#include "record/plan.hpp"

namespace moesim::report {

[[nodiscard]] std::string plan_to_html(const Plan& plan, const HtmlExtras& extras = {});

}  // namespace moesim::report
