// The strict scenario loader (../shared/spec/scenario.md, version 1). Sections are read in a fixed
// order so that a file with several mistakes always reports the same one first.
#include "config/scenario_loader.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "config/enum_field.hpp"
#include "config/hw_loader.hpp"
#include "config/model_loader.hpp"
#include "config/profile_loader.hpp"
#include "config/scenario_limits.hpp"
#include "config/scenario_sections.hpp"
#include "config/topology_loader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace moesim::config {
namespace lim = scenario_limits;

namespace {

constexpr const char* kSchema = "moesim.scenario/1";

const Json& require_section(const Json& obj, const char* key, const std::string& allowed) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw InputError(std::string("/") + key, "", "required field is missing", allowed);
  return *it;
}

void read_schema(const ObjectReader& top) {
  const Json* v = top.get("schema");
  if (!v) return;
  if (!v->is_string() || v->get<std::string>() != kSchema) {
    throw InputError("/schema", describe_value(*v), "unsupported scenario schema", kSchema);
  }
}

/// {"topology": FILE} (with "gpus", "gpu", "profile" optional): the cluster derived from a topology
/// file, FILE relative to the scenario's folder (docs/topology.md, "A topology file in a scenario").
hw::SystemSpec read_topology_system(const ObjectReader& r, const std::filesystem::path& base_dir, Scenario& s) {
  const std::string written = r.require_string("topology");
  if (r.has("preset")) {
    throw InputError(r.path_of("topology"), describe_value(Json(written)),
                     "give either \"preset\" or \"topology\", not both (a topology file describes the whole cluster)");
  }
  // The scenario's own fields are checked before the topology file is read.
  const std::int64_t gpus = r.has("gpus") ? r.require_int("gpus", lim::kGpus) : 0;  // 0: not given (the range starts at 1)
  std::optional<hw::GpuSpec> gpu;
  if (r.has("gpu")) gpu = load_gpu_preset(r.require_string("gpu"), r.path_of("gpu"));
  std::filesystem::path file(written);
  if (file.is_relative()) file = base_dir / file;
  file = file.lexically_normal();  // messages name tests/invalid-topology/x.json, not tests/invalid/../...
  std::error_code ec;
  if (written.empty() || !std::filesystem::is_regular_file(file, ec)) {
    throw InputError(r.path_of("topology"), describe_value(Json(written)),
                     "topology file not found (looked for " + file.string() + ")");
  }
  DerivedSystem derived = derive_system_spec(load_topology_file(file.string()), file.string(), gpu);
  if (gpus != 0 && gpus != derived.system.gpus) {
    const std::string n = std::to_string(derived.system.gpus);
    throw InputError(r.path_of("gpus"), std::to_string(gpus),
                     "system.gpus must equal the number of GPUs in topology file " + file.string() + " (" + n +
                         "); leave it out to take the file's",
                     n);
  }
  s.topology_file = written;
  s.load_warnings = std::move(derived.warnings);
  return std::move(derived.system);
}

/// {"preset": NAME, "gpus": N} or {"topology": FILE}; optional "gpu" override and "profile".
void read_system(const Json& value, const std::filesystem::path& base_dir, Scenario& s) {
  const ObjectReader r(value, "/system", {"preset", "gpus", "gpu", "profile", "topology"});
  s.profile = r.get_string("profile", "");
  if (r.has("topology")) {
    s.system = read_topology_system(r, base_dir, s);
  } else {
    if (!r.has("preset")) {
      throw InputError("/system/preset", "", "required field is missing (or give \"topology\": a topology file)",
                       join(system_preset_names()));
    }
    const std::string preset = r.require_string("preset");
    const std::int64_t gpus = r.require_int("gpus", lim::kGpus);
    s.system = load_system_preset(preset, gpus, "/system/preset");
    if (r.has("gpu")) s.system.gpu = load_gpu_preset(r.require_string("gpu"), "/system/gpu");
  }
  // The profile is read once the GPU type is known: it must have been made on that GPU.
  if (!s.profile.empty()) s.calibration = resolve_profile(s.profile, base_dir, s.system.gpu, "/system/profile");
}

TrainingSpec read_training(const Json& value, AttentionBackend& backend) {
  const ObjectReader r(value, "/training", {"seq_length", "micro_batch_size", "global_batch_size", "attention_backend"});
  TrainingSpec t;
  t.seq_length = r.require_int("seq_length", lim::kSeqLength);
  t.micro_batch_size = r.get_int("micro_batch_size", 1, lim::kMicroBatch);
  t.global_batch_size = r.require_int("global_batch_size", lim::kGlobalBatch);
  backend = get_enum_value(r, "attention_backend", AttentionBackend::kFlash, kAttentionBackendNames);
  return t;
}

ParallelSpec read_parallel(const Json* value, std::int64_t gpus) {
  ParallelSpec p;
  if (!value) {
    p.dp = gpus;
    return p;
  }
  const ObjectReader r(*value, "/parallel",
                       {"tp", "pp", "vpp", "cp", "ep", "etp", "dp", "sequence_parallel", "tp_comm_overlap",
                        "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"});
  p.tp = r.get_int("tp", 1, lim::kParallelSize);
  p.pp = r.get_int("pp", 1, lim::kParallelSize);
  p.vpp = r.get_int("vpp", 1, lim::kParallelSize);
  p.cp = r.get_int("cp", 1, lim::kParallelSize);
  p.ep = r.get_int("ep", 1, lim::kParallelSize);
  p.etp = r.get_int("etp", p.tp, lim::kParallelSize);  // Megatron: expert TP defaults to TP
  // A given dp that disagrees is reported by validate_layout, after the divisibility it depends on.
  p.dp = r.get_int("dp", std::max<std::int64_t>(1, gpus / p.model_parallel()), lim::kParallelSize);
  p.sequence_parallel = r.get_bool("sequence_parallel", p.tp > 1);
  p.tp_comm_overlap = r.get_bool("tp_comm_overlap", false);
  p.account_for_embedding_in_pipeline_split = r.get_bool("account_for_embedding_in_pipeline_split", false);
  p.account_for_loss_in_pipeline_split = r.get_bool("account_for_loss_in_pipeline_split", false);
  return p;
}

Precision read_precision(const ObjectReader& top, const hw::GpuSpec& gpu) {
  const std::string name = top.get_enum("precision", "bf16", names_of(kPrecisionNames));
  const Precision p = *precision_from_string(name);
  if (gpu.supports(p)) return p;
  std::vector<std::string> gpus_with, supported;
  for (const auto& g : gpu_preset_names()) {
    if (load_gpu_preset(g).supports(p)) gpus_with.push_back(g);
  }
  for (Precision q : kAllPrecisions) {
    if (gpu.supports(q)) supported.emplace_back(to_string(q));
  }
  throw InputError("/precision", describe_value(Json(name)),
                   "GPU " + gpu.name + " does not support " + name + " (GPU presets that do: " +
                       (gpus_with.empty() ? std::string("none") : join(gpus_with)) + ")",
                   join(supported));
}

model::FlopsConvention read_flops_convention(const ObjectReader& top) {
  return get_enum_value(top, "flops_convention", model::FlopsConvention::kMegatron, model::kFlopsConventionNames);
}

}  // namespace

Scenario parse_scenario_spec(const Json& obj, const std::string& file, const std::filesystem::path& base_dir) {
  try {
    const ObjectReader top(obj, "",
                           {"schema", "name", "model", "system", "training", "parallel", "precision", "recompute", "moe",
                            "optimizer", "seed", "flops_convention"});
    read_schema(top);
    Scenario s;
    s.file = file;
    s.name = top.get_string("name", "");
    s.model = resolve_model_field(
        require_section(obj, "model", "a preset name (" + join(model_preset_names()) +
                                          "), {\"preset\": ...}, {\"hf_config\": ...} or a full definition"),
        "/model", base_dir, &s.model_ref);
    read_system(require_section(obj, "system", "{\"preset\": NAME, \"gpus\": N} or {\"topology\": FILE}"), base_dir, s);
    s.training = read_training(require_section(obj, "training", "{\"seq_length\", \"global_batch_size\", ...}"),
                               s.attention_backend);
    s.parallel = read_parallel(top.get("parallel"), s.system.gpus);
    s.precision = read_precision(top, s.system.gpu);
    s.recompute = detail::read_recompute(top.get("recompute"));
    s.moe = detail::read_moe(top.get("moe"), base_dir);
    detail::load_routing_histogram_of(s.moe.routing, s.model, base_dir);  // checked against the model just read
    s.optimizer = detail::read_optimizer(top.get("optimizer"));
    s.seed = static_cast<std::uint64_t>(top.get_int("seed", 0, lim::kSeed));
    s.flops_convention = read_flops_convention(top);
    return s;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

Scenario parse_scenario(const Json& obj, const std::string& file, const std::filesystem::path& base_dir) {
  Scenario s = parse_scenario_spec(obj, file, base_dir);
  try {
    validate_layout(s);
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
  return s;
}

Scenario load_scenario_file(const std::string& path) {
  const Json obj = load_json_file(path);
  std::filesystem::path base_dir = std::filesystem::path(path).parent_path();
  if (base_dir.empty()) base_dir = ".";
  return parse_scenario(obj, path, base_dir);
}

}  // namespace moesim::config
