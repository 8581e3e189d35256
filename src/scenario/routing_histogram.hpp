#pragma once
// A measured routing histogram (moe.routing "histogram", docs/routing.md "Measured histograms"):
// tokens per expert per MoE layer, for one or several training steps, as a real router produced
// them. config/ loads and checks it against the model; moe/ turns it into per-layer expert shares.
// It lives with the specs so that both may use it without depending on each other.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace moesim {

struct RoutingHistogram {
  std::string file;          ///< the file it was read from, for messages
  std::int64_t experts = 0;  ///< = the model's num_moe_experts
  /// tokens[step][moe_layer][expert], every layer's total > 0. Steps in the file's order; the
  /// simulation cycles over them.
  std::vector<std::vector<std::vector<double>>> tokens;
  /// The MoE-layer index of each model layer (-1 for a dense layer), from the model's layer
  /// pattern: the simulation names layers by their model index, the histogram by MoE order.
  std::vector<std::int64_t> moe_layer_of;

  [[nodiscard]] std::int64_t steps() const { return static_cast<std::int64_t>(tokens.size()); }
  [[nodiscard]] std::int64_t moe_layers() const {
    return tokens.empty() ? 0 : static_cast<std::int64_t>(tokens.front().size());
  }

  /// The histogram layer for model layer `layer`. MTP layers (index >= num_layers) run the last
  /// decoder layer's ops, so they reuse the last MoE layer's measurement. A dense layer has no
  /// routing: asking for one is a bug in the caller.
  [[nodiscard]] std::int64_t moe_layer(std::int64_t layer) const {
    const auto n = static_cast<std::int64_t>(moe_layer_of.size());
    if (layer >= n && moe_layers() > 0) return moe_layers() - 1;
    if (layer < 0 || layer >= n || moe_layer_of[static_cast<std::size_t>(layer)] < 0) {
      throw InternalError(fmt::format("routing histogram {}: layer {} is not an MoE layer", file, layer));
    }
    return moe_layer_of[static_cast<std::size_t>(layer)];
  }
};

}  // namespace moesim
