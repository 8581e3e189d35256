#include "report/report_assets.hpp"

#include <string>

#include "core/error.hpp"

namespace moesim::report {

std::string_view report_asset(std::string_view suffix) {
  for (const auto files : {report_assets(), report_vendor_assets()}) {
    for (const auto& f : files) {
      if (f.path.size() >= suffix.size() && f.path.substr(f.path.size() - suffix.size()) == suffix) return f.content;
    }
  }
  if (suffix.find("echarts") != std::string_view::npos) {
    throw InputError("--html", std::string(suffix),
                     "HTML reports inline Apache ECharts, which this build of moesim does not contain (cmake found neither "
                     "node_modules/echarts nor npm)",
                     "install npm (Debian package `npm`, or `bash .ci/setup`) and re-run cmake, or pass "
                     "-DMOESIM_ECHARTS_JS=/path/to/echarts.min.js");
  }
  throw InputError("--html", std::string(suffix), "report asset missing from the build", "reports/assets/*");
}

std::string_view echarts_version() { return MOESIM_ECHARTS_VERSION; }

}  // namespace moesim::report
