#include "config/scenario_sections.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "config/enum_field.hpp"
#include "config/routing_histogram.hpp"
#include "scenario/scenario_fields.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace moesim::config::detail {
namespace lim = scenario_fields;

namespace {

const std::vector<std::string> kGranularities = names_of(kRecomputeGranularityNames);
const std::vector<std::string> kRecomputeModules = names_of(kRecomputeModuleNames);

std::vector<RecomputeModule> read_modules(const Json& v, const std::string& path) {
  if (!v.is_array()) {
    throw InputError(path, describe_value(v), "expected a list of module names, got " + describe_type(v),
                     join(kRecomputeModules));
  }
  if (v.empty()) {
    throw InputError(path, "[]", "selective recompute needs at least one module (use \"none\" for no recompute)",
                     join(kRecomputeModules));
  }
  if (v.size() > kRecomputeModules.size()) {
    throw InputError(path, describe_value(v), "more modules than exist", join(kRecomputeModules));
  }
  std::vector<RecomputeModule> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string item_path = path + "/" + std::to_string(i);
    const Json& m = v[i];
    if (!m.is_string()) {
      throw InputError(item_path, describe_value(m), "expected a string, got " + describe_type(m), join(kRecomputeModules));
    }
    const auto module = value_of(kRecomputeModuleNames, m.get<std::string>());
    if (!module) throw InputError(item_path, describe_value(m), "unknown recompute module", join(kRecomputeModules));
    if (std::find(out.begin(), out.end(), *module) != out.end()) {
      throw InputError(item_path, describe_value(m), "module listed twice", join(kRecomputeModules));
    }
    out.push_back(*module);
  }
  return out;
}

struct DistributionParameter {
  const char* distribution;
  const char* key;
};
/// The one parameter each skewed distribution takes; it is required for, and only allowed with, its distribution.
constexpr DistributionParameter kParameters[] = {
    {"zipf", "s"}, {"lognormal", "sigma"}, {"dirichlet", "alpha"}, {"histogram", "file"}};

/// The variation switches shape drawn popularities; a histogram already gives every layer (and
/// step) its measured shares, so there they would silently mean nothing.
void refuse_variation_with_histogram(const Json& v, const std::string& path) {
  for (const char* key : {"per_layer_variation", "per_step_variation"}) {
    if (v.contains(key)) {
      throw InputError(path + "/" + key, describe_value(v[key]),
                       std::string("'") + key +
                           "' applies to drawn popularities; a histogram gives each layer and step its measured shares",
                       "distribution, file, device_limited_nodes");
    }
  }
}

/// The file must exist (relative to the scenario's folder) and say by its name whether it is CSV or JSON.
void check_histogram_file(const std::string& written, const std::string& path, const std::filesystem::path& base_dir) {
  const std::filesystem::path file = histogram_path(written, base_dir);
  std::error_code ec;
  if (written.empty() || !std::filesystem::is_regular_file(file, ec)) {
    throw InputError(path, describe_value(Json(written)),
                     "histogram file not found (looked for " + file.string() + ")");
  }
  if (!histogram_format_known(file)) {
    throw InputError(path, describe_value(Json(written)), "the file name must say the histogram's format",
                     "names ending in .csv or .json");
  }
}

}  // namespace

RoutingSpec read_routing(const Json& v, const std::string& path, const std::filesystem::path& base_dir) {
  const std::vector<std::string> distributions = names_of(kRoutingDistributionNames);
  if (!v.is_object()) throw InputError(path, describe_value(v), "expected an object, got " + describe_type(v));
  // The distribution decides which keys are allowed, so it is read before the strict reader is built.
  std::string name = "balanced";
  if (auto it = v.find("distribution"); it != v.end()) {
    if (!it->is_string() ||
        std::find(distributions.begin(), distributions.end(), it->get<std::string>()) == distributions.end()) {
      throw InputError(path + "/distribution", describe_value(*it),
                       it->is_string() ? "unknown value" : "expected a string, got " + describe_type(*it),
                       join(distributions));
    }
    name = it->get<std::string>();
  }
  std::vector<std::string> keys = {"distribution", "per_layer_variation", "per_step_variation", "device_limited_nodes"};
  if (name == "histogram") {
    refuse_variation_with_histogram(v, path);
    keys = {"distribution", "device_limited_nodes"};
  }
  for (const auto& p : kParameters) {
    if (name == p.distribution) keys.emplace_back(p.key);
  }
  for (const auto& p : kParameters) {
    if (name != p.distribution && v.contains(p.key)) {
      throw InputError(path + "/" + p.key, describe_value(v[p.key]),
                       std::string("'") + p.key + "' is the parameter of the " + p.distribution +
                           " distribution, not of " + name,
                       join(keys));
    }
  }
  const ObjectReader r(v, path, keys);
  RoutingSpec out;
  out.distribution = *value_of(kRoutingDistributionNames, name);
  switch (out.distribution) {
    case RoutingDistribution::kZipf: out.zipf_s = r.require_number("s", lim::kZipfS); break;
    case RoutingDistribution::kLognormal: out.lognormal_sigma = r.require_number("sigma", lim::kLognormalSigma); break;
    case RoutingDistribution::kDirichlet: out.dirichlet_alpha = r.require_number("alpha", lim::kDirichletAlpha); break;
    case RoutingDistribution::kHistogram:
      out.histogram_file = r.require_string("file");
      check_histogram_file(out.histogram_file, r.path_of("file"), base_dir);
      break;
    case RoutingDistribution::kBalanced:
    case RoutingDistribution::kUniform: break;
  }
  out.per_layer_variation = r.get_bool("per_layer_variation", false);
  out.per_step_variation = r.get_bool("per_step_variation", false);
  out.device_limited_nodes = r.get_int("device_limited_nodes", 0, lim::kDeviceLimitedNodes);
  return out;
}

RecomputeSpec read_recompute(const Json* value) {
  const std::string path = "/recompute";
  RecomputeSpec out;
  if (!value) return out;
  if (value->is_string()) {
    const auto granularity = value_of(kRecomputeGranularityNames, value->get<std::string>());
    if (!granularity) throw InputError(path, describe_value(*value), "unknown value", join(kGranularities));
    out.granularity = *granularity;
  } else if (value->is_object()) {
    const ObjectReader r(*value, path, {"granularity", "modules"});
    if (!r.has("granularity")) throw InputError(r.path_of("granularity"), "", "required field is missing", join(kGranularities));
    out.granularity = get_enum_value(r, "granularity", RecomputeGranularity::kNone, kRecomputeGranularityNames);
    if (const Json* modules = r.get("modules")) {
      if (out.granularity != RecomputeGranularity::kSelective) {
        throw InputError(r.path_of("modules"), describe_value(*modules),
                         "modules apply to selective recompute only (granularity is " +
                             std::string(to_string(out.granularity)) + ")");
      }
      out.modules = read_modules(*modules, r.path_of("modules"));
    }
  } else {
    throw InputError(path, describe_value(*value),
                     "expected a string or {\"granularity\", \"modules\"}, got " + describe_type(*value),
                     join(kGranularities));
  }
  // Megatron's default --recompute-modules is the attention core alone.
  if (out.granularity == RecomputeGranularity::kSelective && out.modules.empty()) {
    out.modules = {RecomputeModule::kCoreAttn};
  }
  return out;
}

std::filesystem::path histogram_path(const std::string& written, const std::filesystem::path& base_dir) {
  std::filesystem::path file(written);
  if (file.is_relative()) file = base_dir / file;
  return file.lexically_normal();  // messages name tests/invalid/data/x.csv, not tests/invalid/./data/x.csv
}

void load_routing_histogram_of(RoutingSpec& routing, const model::ModelSpec& model,
                               const std::filesystem::path& base_dir, const std::string& path) {
  if (routing.distribution != RoutingDistribution::kHistogram) return;
  if (model.num_moe_layers() < 1) {
    throw InputError(path + "/distribution", "\"histogram\"",
                     "a routing histogram needs an MoE model (this model has no MoE layer)");
  }
  const std::filesystem::path file = histogram_path(routing.histogram_file, base_dir);
  routing.histogram = std::make_shared<const RoutingHistogram>(load_routing_histogram(file, model));
}

std::vector<CudaGraphScope> read_cuda_graph(const Json& v, const std::string& path) {
  if (v.is_string() && v.get<std::string>() == "none") return {};
  if (!v.is_array()) {
    throw InputError(path, describe_value(v), "expected \"none\" or a list of CUDA-graph scopes",
                     "\"none\", or a list of: " + join(names_of(kCudaGraphScopeNames)));
  }
  return read_name_list(v, path, kCudaGraphScopeNames);
}

RuntimeHost read_host(const Json& v, const std::string& path, hw::HostKind system_host) {
  RuntimeHost host{system_host, std::nullopt};
  if (v.is_number()) {
    host.relative_speed = to_number(v, path, scenario_fields::kRelativeHostSpeed);
    return host;
  }
  const auto kind = v.is_string() ? value_of(hw::kHostKindNames, v.get<std::string>()) : std::nullopt;
  if (!kind) {
    throw InputError(path, describe_value(v), "expected a host kind or a relative speed",
                     join(names_of(hw::kHostKindNames)) + ", or a number in (0, 100]");
  }
  host.kind = *kind;
  return host;
}

}  // namespace moesim::config::detail
