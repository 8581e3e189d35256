#pragma once
// Checks on a report page: its source (no remote resource) and the DOM Chromium dumped after the
// scripts ran (no script error, every section filled, every chart drawn). String searches suffice:
// the page's structure is written by src/report/html_report.cpp and reports/assets/*.js.
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

namespace moesim::test {

/// Every src=, href= or CSS url( that points off the machine.
inline std::string remote_resources(const std::string& page) {
  static const std::regex remote(R"((src|href)\s*=\s*["']?\s*(https?:|//)|url\(\s*["']?\s*(https?:|//)|@import)", std::regex::icase);
  std::string found;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), remote); it != std::sregex_iterator(); ++it) {
    found += page.substr(static_cast<std::size_t>(it->position()), 80) + "\n";
  }
  return found;
}

/// The text between `<section id="id"` and the next `</section>`, or "" if absent.
inline std::string section_of(const std::string& dom, const std::string& id) {
  const auto a = dom.find("<section id=\"" + id + "\"");
  if (a == std::string::npos) return {};
  const auto b = dom.find("</section>", a);
  return dom.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

/// A description of everything wrong with a dumped DOM; empty when the page is right.
inline std::string check_report_dom(const std::string& dom, const std::vector<std::string>& sections) {
  std::string problems;
  if (dom.find("data-rendered=\"ok\"") == std::string::npos) problems += "the renderer did not finish (no data-rendered=\"ok\")\n";
  if (const auto e = dom.find("data-js-errors=\""); e != std::string::npos) {
    problems += "script errors: " + dom.substr(e, dom.find('"', e + 16) - e + 1) + "\n";
  }
  for (const auto& id : sections) {
    const std::string s = section_of(dom, id);
    if (s.empty()) {
      problems += "section #" + id + " missing\n";
    } else if (s.find("<div class=\"body\"></div>") != std::string::npos && s.find("class=\"chart\"") == std::string::npos &&
               s.find("class=\"note") == std::string::npos) {
      problems += "section #" + id + " is empty\n";
    }
  }
  // Each chart container: the text up to the next container or section end must hold a drawn chart.
  int charts = 0;
  for (auto pos = dom.find("class=\"chart\""); pos != std::string::npos; pos = dom.find("class=\"chart\"", pos + 1)) {
    ++charts;
    const auto id_at = dom.find("id=\"", pos);
    const std::string id = dom.substr(id_at + 4, dom.find('"', id_at + 4) - id_at - 4);
    auto end = std::min(dom.find("class=\"chart\"", pos + 1), dom.find("</section>", pos));
    const std::string body = dom.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    const bool svg = body.find("<svg") != std::string::npos && body.find("<path") != std::string::npos;
    bool canvas = false;
    if (const auto c = body.find("<canvas"); c != std::string::npos) {
      const auto w = body.find("width=\"", c);
      canvas = w != std::string::npos && std::atoi(body.c_str() + w + 7) > 0;
    }
    if (!svg && !canvas) problems += "chart #" + id + " has no drawn SVG or canvas\n";
  }
  if (charts == 0) problems += "no chart at all\n";
  return problems;
}

}  // namespace moesim::test
