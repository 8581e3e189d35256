#include "report/plan_html.hpp"

#include "report/html_report.hpp"
#include "report/plan_json.hpp"

namespace moesim::report {

std::string plan_to_html(const Plan& plan, const HtmlExtras& extras) {
  return json_document_to_html(plan_to_json(plan), extras);
}

}  // namespace moesim::report
