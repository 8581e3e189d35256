#include "report/scenario_json.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "report/finite_number.hpp"
#include "report/result_json.hpp"
#include "scenario/scenario_fields.hpp"

namespace moesim::report {
namespace {

using Json = nlohmann::json;

/// Writes the fields of one scenario object into `out`, keyed as the tables key them.
class EchoWriter {
 public:
  EchoWriter(const Scenario& s, Json& out, std::string prefix) : s_(s), out_(out), prefix_(std::move(prefix)) {}

  template <typename Inner>
  void section(const FieldInfo& info, Inner&& inner) {
    Json sub = Json::object();
    EchoWriter writer(s_, sub, prefix_ + std::string(info.key) + ".");
    inner(writer);
    out_[std::string(info.key)] = std::move(sub);
  }
  void constant(const FieldInfo& info, std::string_view text) { set(info, std::string(text)); }
  void text(const FieldInfo& info, const std::string& member) { set(info, member); }
  template <typename T, typename... Derive>
  void integer(const FieldInfo& info, const T& member, IntRange /*range*/, Derive&&... /*derive*/) {
    set(info, member);
  }
  void number(const FieldInfo& info, const double& member, NumberRange /*range*/) { set(info, checked(info, member)); }
  /// Unset optional fields are echoed as null, which the loader reads as unset.
  void optional_integer(const FieldInfo& info, const std::optional<std::int64_t>& member, IntRange /*range*/) {
    set(info, member ? Json(*member) : Json(nullptr));
  }
  void optional_number(const FieldInfo& info, const std::optional<double>& member, NumberRange /*range*/) {
    set(info, member ? Json(checked(info, *member)) : Json(nullptr));
  }
  template <typename... Derive>
  void boolean(const FieldInfo& info, const bool& member, Derive&&... /*derive*/) {
    set(info, member);
  }
  template <typename E, std::size_t N>
  void enumeration(const FieldInfo& info, const E& member, const EnumNames<E, N>& table) {
    set(info, std::string(name_of(table, member)));
  }
  void special(const FieldInfo& info, const model::ModelSpec& member) { set(info, model_to_json(member)); }
  void special(const FieldInfo& info, const hw::SystemSpec& member) {
    Json system{{"gpus", member.gpus}, {"gpu", member.gpu.name}};
    // The file, as written, replaces the preset: a scenario naming both is refused, so the echo
    // must not, and the file's name would not be a preset name anyway.
    if (s_.topology_file.empty()) {
      system["preset"] = member.name;
    } else {
      system["topology"] = s_.topology_file;
    }
    if (!s_.profile.empty()) system["profile"] = s_.profile;
    set(info, std::move(system));
  }
  void special(const FieldInfo& info, const RecomputeSpec& member) { set(info, recompute_to_json(member)); }
  void special(const FieldInfo& info, const RoutingSpec& member) { set(info, routing_to_json(member)); }
  void special(const FieldInfo& info, const std::optional<RoutingSpec>& member) {
    set(info, member ? routing_to_json(*member) : Json(nullptr));
  }
  void special(const FieldInfo& info, const std::vector<CudaGraphScope>& member) {
    if (member.empty()) {
      set(info, "none");
      return;
    }
    Json scopes = Json::array();
    for (const CudaGraphScope scope : member) scopes.push_back(std::string(to_string(scope)));
    set(info, std::move(scopes));
  }
  /// The kind's name, or the relative speed (read back against the same system's host kind).
  void special(const FieldInfo& info, const RuntimeHost& member) {
    if (member.relative_speed) {
      set(info, checked(info, *member.relative_speed));
    } else {
      set(info, std::string(name_of(hw::kHostKindNames, member.kind)));
    }
  }
  template <typename E, std::size_t N>
  void enumeration_list(const FieldInfo& info, const std::vector<E>& member, const EnumNames<E, N>& table) {
    Json names = Json::array();
    for (const E e : member) names.push_back(std::string(name_of(table, e)));
    set(info, std::move(names));
  }

 private:
  void set(const FieldInfo& info, Json value) { out_[std::string(info.key)] = std::move(value); }
  [[nodiscard]] double checked(const FieldInfo& info, double v) const {
    return finite_number(v, "result", prefix_ + std::string(info.key));
  }

  const Scenario& s_;
  Json& out_;
  std::string prefix_;  ///< "moe." inside the moe section, for messages
};

}  // namespace

Json routing_to_json(const RoutingSpec& r) {
  Json j{{"distribution", std::string(to_string(r.distribution))},
         {"per_layer_variation", r.per_layer_variation},
         {"per_step_variation", r.per_step_variation},
         {"device_limited_nodes", r.device_limited_nodes}};
  auto parameter = [](double v, const char* key) { return finite_number(v, "result", std::string("moe.routing.") + key); };
  switch (r.distribution) {
    case RoutingDistribution::kZipf: j["s"] = parameter(r.zipf_s, "s"); break;
    case RoutingDistribution::kLognormal: j["sigma"] = parameter(r.lognormal_sigma, "sigma"); break;
    case RoutingDistribution::kDirichlet: j["alpha"] = parameter(r.dirichlet_alpha, "alpha"); break;
    case RoutingDistribution::kHistogram: j["file"] = r.histogram_file; break;
    case RoutingDistribution::kBalanced:
    case RoutingDistribution::kUniform: break;
  }
  return j;
}

Json recompute_to_json(const RecomputeSpec& r) {
  Json j{{"granularity", std::string(to_string(r.granularity))}};
  if (r.granularity == RecomputeGranularity::kSelective) {
    Json modules = Json::array();
    for (RecomputeModule m : r.modules) modules.push_back(std::string(to_string(m)));
    j["modules"] = modules;
  }
  return j;
}

Json scenario_to_json(const Scenario& s) {
  Json out = Json::object();
  EchoWriter writer(s, out, "");
  scenario_fields::visit_scenario(writer, s);
  return out;
}

std::string scenario_to_json_text(const Scenario& s) {
  return scenario_to_json(s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
