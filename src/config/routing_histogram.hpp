#pragma once
// The strict reader of measured routing histograms (docs/routing.md, "Measured histograms"): CSV
// rows `[step,]layer,expert,tokens` or JSON `moesim.routing-histogram/1`, checked against the model
// (expert count, MoE layer count, every (layer, expert) exactly once per step, no negative counts,
// no layer without tokens). Every error names the histogram file and the line or JSON path.
#include <filesystem>
#include <string>
#include <string_view>

#include "model/model_spec.hpp"
#include "scenario/routing_histogram.hpp"

namespace moesim::config {

enum class HistogramFormat { kCsv, kJson };

inline constexpr const char* kRoutingHistogramSchema = "moesim.routing-histogram/1";

/// Whether the file name says which format it is (.csv or .json, any case), and which. The scenario
/// loader refuses other names before reading, so a file is never guessed at.
[[nodiscard]] bool histogram_format_known(const std::filesystem::path& path);
[[nodiscard]] HistogramFormat histogram_format_of(const std::filesystem::path& path);

/// Reads and checks a histogram file for `model` (an MoE model). Throws InputError naming `path`.
[[nodiscard]] RoutingHistogram load_routing_histogram(const std::filesystem::path& path, const model::ModelSpec& model);

/// The same from text already read; `file` names it in messages.
[[nodiscard]] RoutingHistogram parse_routing_histogram(std::string_view text, HistogramFormat format,
                                                       const std::string& file, const model::ModelSpec& model);

}  // namespace moesim::config
