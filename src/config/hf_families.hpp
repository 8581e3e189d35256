#pragma once
// Internal to config/: one reader per HuggingFace model family (model_type), used by
// import_hf_config. Each turns a config.json object into Megatron-named fields.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/json_reader.hpp"
#include "model/model_spec.hpp"

namespace moesim::config::hf {

/// A family's reading of a config.json: the spec (name and source still empty) and, for each
/// Megatron field, the HF key it came from, so that a cross-field error found by model::validate
/// ("/num_query_groups") points at the key the user can fix ("/num_key_value_heads").
struct Imported {
  model::ModelSpec spec;
  std::vector<std::pair<std::string, std::string>> hf_key_of;
};

struct Family {
  std::string_view model_type;
  Imported (*read)(const Json& cfg);
};

/// Every supported model_type (aliases included), sorted.
[[nodiscard]] std::span<const Family> families();

/// A reader that accepts every key the object has: HF configs carry many fields moesim has no use
/// for (rope_theta, torch_dtype, ...), while the fields it reads keep their type and range checks.
[[nodiscard]] ObjectReader lenient_reader(const Json& value, const std::string& path);

}  // namespace moesim::config::hf
