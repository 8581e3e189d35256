#pragma once
// Model specs from JSON: built-in presets (src/model/presets/*.json, embedded in the binary), full
// definitions with Megatron-Core names, and HuggingFace config.json files with each family's aliases
// and nesting (Mixtral, DeepSeek-V2/V3, Qwen3-MoE, OLMoE, DBRX, Llama, Llama-4 text_config, ESM).
#include <filesystem>
#include <string>
#include <vector>

#include "config/json_reader.hpp"
#include "model/model_spec.hpp"

namespace moesim::config {

/// Names of the built-in model presets, sorted ("dbrx", "deepseek-v3", ...).
[[nodiscard]] std::vector<std::string> model_preset_names();

/// A built-in preset. Unknown name → InputError at `path` with value the name and the known names
/// as the allowed values.
[[nodiscard]] model::ModelSpec load_model_preset(const std::string& name, const std::string& path = "/model");

/// A full definition with Megatron-Core names (scenario.md "Full model definition"): unknown keys,
/// wrong types and out-of-range values are InputErrors with paths under `path`. `name`/`source` keys
/// are accepted. Runs model::validate.
[[nodiscard]] model::ModelSpec parse_model_definition(const Json& obj, const std::string& path);

/// Applies override keys (Megatron names) from `obj` on top of `base`, e.g. {"preset": "mixtral-8x7b",
/// "num_layers": 4}. `skip_key` ("preset" or "hf_config") is ignored.
[[nodiscard]] model::ModelSpec apply_model_overrides(model::ModelSpec base, const Json& obj, const std::string& path,
                                                     const std::string& skip_key);

/// Imports a HuggingFace config.json object. Keys the importer does not need (rope_theta, torch_dtype,
/// ...) are ignored, as HF configs carry many; the fields it needs must be present with the right types.
[[nodiscard]] model::ModelSpec import_hf_config(const Json& cfg, const std::string& file);
[[nodiscard]] model::ModelSpec import_hf_config_file(const std::string& path);

/// Resolves a scenario's "model" field: a preset name, {"preset": NAME, ...overrides},
/// {"hf_config": "path/config.json", ...overrides} (relative to `base_dir`, the scenario's folder),
/// or a full definition. `model_ref` receives the preset name, "hf_config:PATH" or "".
[[nodiscard]] model::ModelSpec resolve_model_field(const Json& value, const std::string& path,
                                                   const std::filesystem::path& base_dir, std::string* model_ref);

}  // namespace moesim::config
