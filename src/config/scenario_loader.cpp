// The strict scenario loader (../shared/spec/scenario.md, version 1), driven by the field tables
// (scenario/scenario_fields.hpp): their keys are the allowed lists, their ranges the checks, and
// fields are read in table order, so a file with several mistakes always reports the same one first.
#include "config/scenario_loader.hpp"

#include "config/fitted_constants.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "config/enum_field.hpp"
#include "config/field_section.hpp"
#include "config/hw_loader.hpp"
#include "config/model_loader.hpp"
#include "config/profile_loader.hpp"
#include "config/scenario_sections.hpp"
#include "config/topology_loader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "scenario/scenario_fields.hpp"

namespace moesim::config {
namespace lim = scenario_fields;

namespace {

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

/// A precision the GPU lacks is refused naming the GPU presets that have it.
void check_precision_supported(Precision p, const hw::GpuSpec& gpu) {
  if (gpu.supports(p)) return;
  const std::string name(to_string(p));
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


/// Reads one JSON object of a scenario into its members through the field table: a field that is
/// absent (or null) keeps the struct's default or takes its derived default.
class FieldReader {
 public:
  FieldReader(const ObjectReader& r, Scenario& s, const std::filesystem::path& base_dir)
      : r_(r), s_(s), base_dir_(base_dir) {}

  /// An absent optional section reads as {}: its derived defaults still apply (dp = gpus).
  template <typename Inner>
  void section(const FieldInfo& info, Inner&& inner) {
    read_field_section(r_, info, inner, [&](const ObjectReader& sub) {
      FieldReader reader(sub, s_, base_dir_);
      inner(reader);
    });
  }

  void constant(const FieldInfo& info, std::string_view text) const {
    const Json* v = r_.get(info.key);
    if (v && (!v->is_string() || v->get<std::string>() != text)) {
      throw InputError(r_.path_of(info.key), describe_value(*v), "unsupported scenario schema", std::string(text));
    }
  }
  void text(const FieldInfo& info, std::string& member) const { member = r_.get_string(info.key, member); }

  template <typename T>
  void integer(const FieldInfo& info, T& member, IntRange range,
               DeriveFn<Scenario, std::int64_t> derive = nullptr) const {
    if (info.required) {
      member = static_cast<T>(r_.require_int(info.key, range));
    } else if (const auto v = r_.optional_int(info.key, range)) {
      member = static_cast<T>(*v);
    } else if (derive) {
      member = static_cast<T>(derive(s_));
    }
  }
  void number(const FieldInfo& info, double& member, NumberRange range) const {
    member = r_.get_number(info.key, member, range);
  }
  void optional_integer(const FieldInfo& info, std::optional<std::int64_t>& member, IntRange range) const {
    member = r_.optional_int(info.key, range);
  }
  void optional_number(const FieldInfo& info, std::optional<double>& member, NumberRange range) const {
    member = r_.optional_number(info.key, range);
  }
  void boolean(const FieldInfo& info, bool& member, DeriveFn<Scenario, bool> derive = nullptr) const {
    if (const auto v = r_.optional_bool(info.key)) {
      member = *v;
    } else if (derive) {
      member = derive(s_);
    }
  }
  template <typename E, std::size_t N>
  void enumeration(const FieldInfo& info, E& member, const EnumNames<E, N>& table) const {
    member = info.required ? require_enum_value(r_, info.key, table) : get_enum_value(r_, info.key, member, table);
    // The GPU is read before the precision (table order): a format it lacks is refused here.
    if constexpr (std::is_same_v<E, Precision>) check_precision_supported(member, s_.system.gpu);
  }

  void special(const FieldInfo& info, model::ModelSpec& member) const {
    const Json* v = r_.get(info.key);
    if (!v) {
      throw InputError(r_.path_of(info.key), "", "required field is missing",
                       "a preset name (" + join(model_preset_names()) +
                           "), {\"preset\": ...}, {\"hf_config\": ...} or a full definition");
    }
    member = resolve_model_field(*v, r_.path_of(info.key), base_dir_, &s_.model_ref);
  }
  void special(const FieldInfo& info, hw::SystemSpec& /*member: read_system fills it and what it came from*/) const {
    const Json* v = r_.get(info.key);
    if (!v) {
      throw InputError(r_.path_of(info.key), "", "required field is missing",
                       "{\"preset\": NAME, \"gpus\": N} or {\"topology\": FILE}");
    }
    read_system(*v, base_dir_, s_);
  }
  void special(const FieldInfo& info, RecomputeSpec& member) const { member = detail::read_recompute(r_.get(info.key)); }
  void special(const FieldInfo& info, std::vector<CudaGraphScope>& member) const {
    if (const Json* v = r_.get(info.key)) member = detail::read_cuda_graph(*v, r_.path_of(info.key));
  }
  /// Read after the system (table order): an absent host is the system's.
  void special(const FieldInfo& info, RuntimeHost& member) const {
    const Json* v = r_.get(info.key);
    member = v ? detail::read_host(*v, r_.path_of(info.key), s_.system.host) : RuntimeHost{s_.system.host, std::nullopt};
  }
  template <typename E, std::size_t N>
  void enumeration_list(const FieldInfo& info, std::vector<E>& member, const EnumNames<E, N>& table) const {
    if (const Json* v = r_.get(info.key)) member = detail::read_name_list(*v, r_.path_of(info.key), table);
  }
  /// The histogram's contents are checked against the model, read before it (table order).
  void special(const FieldInfo& info, RoutingSpec& member) const {
    const Json* v = r_.get(info.key);
    if (!v) return;
    member = detail::read_routing(*v, r_.path_of(info.key), base_dir_);
    detail::load_routing_histogram_of(member, s_.model, base_dir_, r_.path_of(info.key));
  }
  /// moe.placement.profile: a routing spec as moe.routing, or unset (absent or null).
  void special(const FieldInfo& info, std::optional<RoutingSpec>& member) const {
    const Json* v = r_.get(info.key);
    if (!v || v->is_null()) return;
    RoutingSpec profile;
    special(info, profile);
    member = std::move(profile);
  }

 private:
  const ObjectReader& r_;
  Scenario& s_;
  const std::filesystem::path& base_dir_;
};

}  // namespace

Scenario parse_scenario_spec(const Json& obj, const std::string& file, const std::filesystem::path& base_dir) {
  try {
    Scenario s;
    s.file = file;
    s.host_costs = fitted_host_costs();
    FieldKeys table;
    scenario_fields::visit_scenario(table, s);
    const ObjectReader top(obj, "", table.keys);
    FieldReader reader(top, s, base_dir);
    scenario_fields::visit_scenario(reader, s);
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
