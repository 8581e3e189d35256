#include "report/html_report.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"
#include "report/html_util.hpp"
#include "report/report_assets.hpp"
#include "report/result_json.hpp"
#include "report/timeline_digest.hpp"

namespace moesim::report {
namespace {

using Json = nlohmann::json;

// The page's skeleton: sections in reading order, each with the chart containers report.js fills.
// Containers are static (not created by the script) so the page's structure is visible in the file
// itself; report.js replaces a container with a note when the document has no data for it.
struct Section {
  const char* id;
  const char* title;
  std::vector<const char*> charts;
};

const std::vector<Section>& result_sections() {
  static const std::vector<Section> s{
      {"summary", "Summary", {}},
      {"breakdown", "Where the step goes", {"breakdown-chart", "ranks-chart"}},
      {"memory", "Peak memory per pipeline stage", {"memory-chart"}},
      {"timeline", "Timeline of one step (critical ranks)", {"timeline-chart"}},
      {"expert-load", "Expert load: layers × experts, and per EP rank", {"expert-heatmap", "expert-chart"}},
      {"topology", "Topology", {"topology-graph", "links-chart"}},
      {"assumptions", "Assumptions and warnings", {}},
      {"inputs", "Inputs", {}}};
  return s;
}

const std::vector<Section>& validation_sections() {
  static const std::vector<Section> s{{"summary", "Verdict", {}},
                                      {"phases", "Predicted vs measured, per phase", {"phases-chart"}},
                                      {"proxy", "The proxy that ran", {}},
                                      {"inputs", "Inputs", {}}};
  return s;
}

const std::vector<Section>& comparison_sections() {
  static const std::vector<Section> s{{"summary", "Side by side", {}},
                                      {"breakdown", "Where the step goes", {"breakdown-chart"}},
                                      {"memory", "Peak memory per pipeline stage", {}},
                                      {"differences", "What differs in the scenarios", {}},
                                      {"inputs", "Inputs", {}}};
  return s;
}

const std::vector<Section>& plan_sections() {
  static const std::vector<Section> s{
      {"summary", "Recommendation", {}},
      {"ranked", "Ranked layouts", {}},
      {"breakdown", "Where the step goes, per layout (critical rank)", {"breakdown-chart"}},
      {"memory", "Winner's peak memory per pipeline stage", {"memory-chart"}},
      {"timeline", "Timeline of one step", {}},
      {"rejected", "Rejected candidates", {}},
      {"precision", "Precision advice", {}},
      {"skew", "Routing-skew sensitivity", {"skew-chart"}},
      {"pareto", "Pareto front", {"pareto-chart"}},
      {"expert-load", "Expert load of the winner: layers × experts, and per EP rank", {"expert-heatmap", "expert-chart"}},
      {"topology", "Topology", {"topology-graph", "links-chart"}},
      {"assumptions", "Assumptions and warnings", {}},
      {"inputs", "Inputs", {}}};
  return s;
}

Json tier_graph_to_json(const hw::TierGraph& g) {
  Json nodes = Json::array(), edges = Json::array();
  for (const auto& n : g.nodes) nodes.push_back(Json{{"name", n.name}, {"kind", n.kind}, {"gpus", n.gpus}});
  for (const auto& e : g.edges) {
    edges.push_back(Json{{"a", e.a}, {"b", e.b}, {"cables", e.cables}, {"bandwidth_bytes_per_s", e.bandwidth_bytes_per_s}});
  }
  return Json{{"name", g.name}, {"description", g.description}, {"nodes", nodes}, {"edges", edges}};
}

std::string str_at(const Json& j, const Json::json_pointer& p) {
  return j.contains(p) && j.at(p).is_string() ? j.at(p).get<std::string>() : std::string("?");
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Inline <script> blocks: data first (report.js reads them), then ECharts, then the renderer.
std::string data_script(const char* id, const Json& j) {
  return fmt::format("<script type=\"application/json\" id=\"{}\">{}</script>\n", id, script_safe(dump(j)));
}

// The page: the sections' skeleton, the data, ECharts and the renderer, every byte inline.
std::string page(const char* kind, const std::string& title, const std::string& subtitle, const std::string& schema,
                 const std::vector<Section>& sections, const Json& doc, const HtmlExtras& extras) {
  // Fetch the assets first so a build without ECharts fails before anything is written.
  const std::string_view echarts = report_asset("echarts/dist/echarts.min.js");
  const std::string_view style = report_asset("reports/assets/report.css");
  std::string h;
  h.reserve(echarts.size() + 256 * 1024);
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>" + html_escape(title) + "</title>\n";
  // Records script errors into the DOM before anything else runs: the headless-browser test reads
  // data-js-errors from the dumped DOM (tests/report_html/).
  h += "<script>window.__moesimErrors=[];function __moesimError(m){window.__moesimErrors.push(String(m));"
       "document.documentElement.setAttribute('data-js-errors',window.__moesimErrors.join(' | '));}"
       "window.addEventListener('error',function(e){__moesimError(e.message||e);});"
       "(function(){var ce=console.error;console.error=function(){__moesimError(Array.prototype.join.call(arguments,' '));"
       "ce.apply(console,arguments);};})();</script>\n";
  h += "<style>\n" + std::string(style) + "</style>\n</head>\n";
  h += fmt::format("<body class=\"{}\">\n<header><h1>{}</h1><p class=\"sub\" id=\"subtitle\">{}</p></header>\n",
                   kind, html_escape(title), html_escape(subtitle));
  h += "<noscript><p class=\"warn\">This report draws its tables and charts with JavaScript (inline, nothing is "
       "fetched); the data is embedded below as JSON.</p></noscript>\n<nav id=\"toc\"></nav>\n";
  for (const auto& s : sections) {
    h += fmt::format("<section id=\"{}\"><h2>{}</h2><div class=\"body\"></div>", s.id, s.title);
    for (const char* c : s.charts) h += fmt::format("<div class=\"chart\" id=\"{}\"></div>", c);
    h += "</section>\n";
  }
  h += fmt::format("<footer>moesim {} · charts: Apache ECharts {} (Apache-2.0), inlined · schema {}</footer>\n",
                   html_escape(std::string(kVersion)), html_escape(std::string(echarts_version())), html_escape(schema));
  h += data_script(fmt::format("{}-data", kind).c_str(), doc);
  Json meta{{"trace_href", extras.trace_href}, {"moesim_version", std::string(kVersion)}};
  h += data_script("report-meta", meta);
  if (extras.timeline && !extras.timeline->events.empty()) h += data_script("timeline-data", timeline_digest(*extras.timeline));
  if (extras.topology) h += data_script("topology-data", tier_graph_to_json(*extras.topology));
  h += "<script>\n" + script_safe(echarts) + "\n</script>\n";
  // The renderer: reports/assets/*.js in name order (the embedded files are sorted by path).
  for (const auto& f : report_assets()) {
    if (f.path.ends_with(".js")) h += "<script>\n" + script_safe(f.content) + "\n</script>\n";
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace

std::string json_document_to_html(const Json& doc, const HtmlExtras& extras) {
  const std::string schema = doc.is_object() && doc.contains("schema") && doc["schema"].is_string() ? doc["schema"].get<std::string>() : "";
  const bool plan = schema == "moesim.plan/1";
  const bool validation = schema == "moesim.validation/1";
  if (!plan && !validation && schema != "moesim.result/1") {
    throw InputError("/schema", schema.empty() ? "(missing)" : schema,
                     "a report renders a result, a plan or a validation",
                     "moesim.result/1, moesim.plan/1, moesim.validation/1");
  }
  std::string scenario, title;
  if (validation) {
    scenario = str_at(doc, Json::json_pointer("/scenario"));
    title = fmt::format("moesim validation · {} (measured on {})", scenario,
                        str_at(doc, Json::json_pointer("/measured/gpu")));
  } else {
    scenario = str_at(doc, Json::json_pointer(plan ? "/request/scenario/name" : "/scenario/name"));
    const Json::json_pointer sp = Json::json_pointer(plan ? "/request/scenario" : "/scenario");
    const std::string model = str_at(doc, sp / "model" / "name"), system = str_at(doc, sp / "system" / "preset");
    title = fmt::format("moesim {} · {} on {}", plan ? "plan" : "result", model, system);
  }
  const char* kind = plan ? "plan" : validation ? "validation" : "result";
  return page(kind, title, scenario, schema, plan ? plan_sections() : validation ? validation_sections() : result_sections(),
              doc, extras);
}

std::string comparison_to_html(const Json& left, const std::string& left_label, const Json& right,
                               const std::string& right_label) {
  // A plan stands for its winner; either side may be a result or a plan.
  const auto side = [](const Json& doc, const std::string& label) {
    const std::string schema =
        doc.is_object() && doc.contains("schema") && doc["schema"].is_string() ? doc["schema"].get<std::string>() : "";
    if (schema != "moesim.result/1" && schema != "moesim.plan/1") {
      throw InputError("/schema", schema.empty() ? "(missing)" : schema, "a comparison sets results or plans side by side",
                       "moesim.result/1, moesim.plan/1")
          .in_file(label);
    }
    const bool plan = schema == "moesim.plan/1";
    if (plan && !(doc.contains("winner") && doc["winner"].is_object())) {
      throw InputError("/winner", "(missing)", "a plan without a winner has nothing to compare", "a plan with a winner").in_file(label);
    }
    return Json{{"label", label}, {"kind", plan ? "plan" : "result"}, {"result", plan ? doc["winner"] : doc}};
  };
  const Json data{{"schema", "moesim.comparison"}, {"left", side(left, left_label)}, {"right", side(right, right_label)}};
  const std::string title = fmt::format("moesim comparison · {} vs {}", left_label, right_label);
  return page("comparison", title, "", "moesim.result/1 or moesim.plan/1, side by side", comparison_sections(), data, {});
}

void require_html_support() { (void)report_asset("echarts/dist/echarts.min.js"); }

std::string result_to_html(const Result& r, const HtmlExtras& extras) { return json_document_to_html(result_to_json(r), extras); }

std::string file_document_to_html(const Json& doc, const std::string& path, const HtmlExtras& extras) {
  try {
    return json_document_to_html(doc, extras);
  } catch (InputError& e) {
    throw e.in_file(path);
  }
}

}  // namespace moesim::report
