// The strict scenario loader (../shared/spec/scenario.md, version 1). Sections are read in a fixed
// order so that a file with several mistakes always reports the same one first.
#include "config/scenario_loader.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "config/hw_loader.hpp"
#include "config/model_loader.hpp"
#include "config/scenario_limits.hpp"
#include "config/scenario_sections.hpp"
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

hw::SystemSpec read_system(const Json& value, std::string& profile) {
  if (value.is_object() && value.contains("topology")) {
    // Checked before the strict reader so that {"topology": ...} gets this answer, not "unknown key".
    throw InputError("/system/topology", describe_value(value["topology"]),
                     "topology files are not supported yet (they arrive with the network model); use "
                     "{\"preset\": NAME, \"gpus\": N}",
                     join(system_preset_names()));
  }
  const ObjectReader r(value, "/system", {"preset", "gpus", "gpu", "profile", "topology"});
  if (!r.has("preset")) throw InputError("/system/preset", "", "required field is missing", join(system_preset_names()));
  const std::string preset = r.require_string("preset");
  const std::int64_t gpus = r.require_int("gpus", lim::kGpus);
  hw::SystemSpec system = load_system_preset(preset, gpus, "/system/preset");
  if (r.has("gpu")) system.gpu = load_gpu_preset(r.require_string("gpu"), "/system/gpu");
  profile = r.get_string("profile", "");
  return system;
}

TrainingSpec read_training(const Json& value, AttentionBackend& backend) {
  const ObjectReader r(value, "/training", {"seq_length", "micro_batch_size", "global_batch_size", "attention_backend"});
  TrainingSpec t;
  t.seq_length = r.require_int("seq_length", lim::kSeqLength);
  t.micro_batch_size = r.get_int("micro_batch_size", 1, lim::kMicroBatch);
  t.global_batch_size = r.require_int("global_batch_size", lim::kGlobalBatch);
  backend = r.get_enum("attention_backend", "flash", {"flash", "unfused"}) == "unfused" ? AttentionBackend::kUnfused
                                                                                         : AttentionBackend::kFlash;
  return t;
}

ParallelSpec read_parallel(const Json* value, std::int64_t gpus) {
  ParallelSpec p;
  if (!value) {
    p.dp = gpus;
    return p;
  }
  const ObjectReader r(*value, "/parallel",
                       {"tp", "pp", "vpp", "cp", "ep", "etp", "dp", "sequence_parallel", "tp_comm_overlap"});
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
  return p;
}

Precision read_precision(const ObjectReader& top, const hw::GpuSpec& gpu) {
  const std::string name = top.get_enum("precision", "bf16", [] {
    std::vector<std::string> names;
    for (Precision p : kAllPrecisions) names.emplace_back(to_string(p));
    return names;
  }());
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
  return top.get_enum("flops_convention", "megatron", {"megatron", "full-s2"}) == "full-s2"
             ? model::FlopsConvention::kFullS2
             : model::FlopsConvention::kMegatron;
}

}  // namespace

Scenario parse_scenario(const Json& obj, const std::string& file, const std::filesystem::path& base_dir) {
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
    s.system = read_system(require_section(obj, "system", "{\"preset\": NAME, \"gpus\": N}"), s.profile);
    s.training = read_training(require_section(obj, "training", "{\"seq_length\", \"global_batch_size\", ...}"),
                               s.attention_backend);
    s.parallel = read_parallel(top.get("parallel"), s.system.gpus);
    s.precision = read_precision(top, s.system.gpu);
    s.recompute = detail::read_recompute(top.get("recompute"));
    s.moe = detail::read_moe(top.get("moe"), base_dir);
    s.optimizer = detail::read_optimizer(top.get("optimizer"));
    s.seed = static_cast<std::uint64_t>(top.get_int("seed", 0, lim::kSeed));
    s.flops_convention = read_flops_convention(top);
    validate_layout(s);
    return s;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

Scenario load_scenario_file(const std::string& path) {
  const Json obj = load_json_file(path);
  std::filesystem::path base_dir = std::filesystem::path(path).parent_path();
  if (base_dir.empty()) base_dir = ".";
  return parse_scenario(obj, path, base_dir);
}

}  // namespace moesim::config
