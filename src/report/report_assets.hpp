#pragma once
// The files the HTML reports inline: reports/assets/ (the report's script and style sheet) and the
// pinned Apache ECharts from npm (cmake/report_assets.cmake), compiled into the binary so that
// `moesim` writes self-contained pages from any directory.
#include <span>
#include <string_view>

#include "core/embedded_files.hpp"

namespace moesim {
/// Defined in the generated moesim_report_assets library: reports/assets/*, and the vendored
/// echarts.min.js (empty when the build found no ECharts).
[[nodiscard]] std::span<const EmbeddedFile> report_assets();
[[nodiscard]] std::span<const EmbeddedFile> report_vendor_assets();
}  // namespace moesim

namespace moesim::report {

/// The embedded asset whose path ends with `suffix`. Throws InputError naming how to get it when
/// absent (ECharts is missing when the build found neither npm nor node_modules/).
[[nodiscard]] std::string_view report_asset(std::string_view suffix);

/// The version of ECharts pinned in package-lock.json.
[[nodiscard]] std::string_view echarts_version();

}  // namespace moesim::report
