// GPU and cluster presets: strict readers of src/hw/gpus/*.json and topologies/systems/*.json. Every
// figure in those files must carry its citation in "sources"; a figure without one is an error, so a
// number nobody can trace back never reaches the estimator.
#include "config/hw_loader.hpp"

#include "config/fitted_constants.hpp"

#include <algorithm>
#include <string_view>

#include "config/embedded_json.hpp"
#include "config/enum_field.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/units.hpp"

namespace moesim::config {
namespace {

constexpr std::string_view kGpuDir = "src/hw/gpus/";
constexpr std::string_view kSystemDir = "topologies/systems/";

/// Reads "sources": every key one of `figures` (or `extra_keys`), every value a non-empty citation,
/// and every figure in `figures` cited (a figure may instead be cited by all of its `per_part` keys).
std::map<std::string, std::string> read_sources(const ObjectReader& parent, const std::vector<std::string>& figures,
                                                const std::vector<std::string>& extra_keys,
                                                const std::string& split_figure,
                                                const std::vector<std::string>& split_keys) {
  std::vector<std::string> allowed = figures;
  allowed.insert(allowed.end(), extra_keys.begin(), extra_keys.end());
  const Json* value = parent.get("sources");
  if (!value) throw InputError(parent.path_of("sources"), "", "required field is missing: every figure needs its source");
  ObjectReader r(*value, parent.path_of("sources"), allowed);
  std::map<std::string, std::string> out;
  for (const auto& key : allowed) {
    if (r.has(key)) out[key] = r.require_nonempty_string(key);
  }
  for (const auto& figure : figures) {
    if (out.count(figure)) continue;
    const bool split_cited = figure == split_figure && !split_keys.empty() &&
                             std::all_of(split_keys.begin(), split_keys.end(), [&](const std::string& k) { return out.count(k) != 0; });
    if (!split_cited) {
      throw InputError(r.path_of(figure), "", "required field is missing: every figure needs its source");
    }
  }
  return out;
}

/// Tensor-core formats each architecture has: FP8 arrived with Hopper, MX and NVFP4 scaling with Blackwell.
std::vector<Precision> precisions_of(const std::string& architecture) {
  if (architecture == "ampere") return {Precision::kBf16, Precision::kFp16};
  if (architecture == "hopper") return {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kFp8Blockwise};
  return {kAllPrecisions.begin(), kAllPrecisions.end()};
}

std::vector<std::string> precision_names(const std::vector<Precision>& ps) {
  std::vector<std::string> out;
  for (Precision p : ps) out.emplace_back(to_string(p));
  return out;
}

constexpr NumberRange kFraction{0.0, 1.0, true};

void read_dense_peaks(const ObjectReader& r, hw::GpuSpec& spec) {
  const Json* value = r.get("dense_peak_tflops");
  if (!value) throw InputError(r.path_of("dense_peak_tflops"), "", "required field is missing");
  ObjectReader peaks(*value, r.path_of("dense_peak_tflops"), names_of(kPrecisionNames));
  const auto supported = precisions_of(spec.architecture);
  for (Precision p : kAllPrecisions) {
    const std::string key(to_string(p));
    const auto tflops = peaks.optional_number(key, NumberRange{0.0, 1e7, true});
    if (!tflops) continue;
    if (std::find(supported.begin(), supported.end(), p) == supported.end()) {
      throw InputError(peaks.path_of(key), format_number(*tflops),
                       key + " tensor cores do not exist on " + spec.architecture + " GPUs",
                       join(precision_names(supported)));
    }
    spec.dense_peak[p] = teraflops_per_second(*tflops);
  }
  if (!spec.supports(Precision::kBf16)) {
    throw InputError(peaks.path_of("bf16"), "", "required field is missing: the BF16 peak is the MFU denominator");
  }
}

/// Optional per-precision sustained GEMM ceilings; each needs its own source key
/// "gemm_peak_efficiency_by_precision.<precision>".
std::vector<std::string> read_precision_efficiencies(const ObjectReader& r, hw::GpuSpec& spec) {
  std::vector<std::string> source_keys;
  const Json* value = r.get("gemm_peak_efficiency_by_precision");
  if (!value) return source_keys;
  const std::string field = "gemm_peak_efficiency_by_precision";
  ObjectReader effs(*value, r.path_of(field), names_of(kPrecisionNames));
  for (Precision p : kAllPrecisions) {
    const std::string key(to_string(p));
    const auto eff = effs.optional_number(key, kFraction);
    if (!eff) continue;
    if (!spec.supports(p)) {
      throw InputError(effs.path_of(key), format_number(*eff), "no dense_peak_tflops." + key + " for this efficiency",
                       join(names_of(kPrecisionNames)));
    }
    spec.gemm_peak_efficiency_by_precision[p] = *eff;
    source_keys.push_back(field + "." + key);
  }
  return source_keys;
}

/// The dispatchers whose kernels have published intra-domain rates (scenario moe.dispatcher names).
const std::vector<std::string> kEpKernelNames{"deepep", "hybridep"};

/// Optional `field` ("ep_kernel_algbw_gb_per_s" or "ep_kernel_rdma_gb_per_s"): per dispatcher, rows
/// {ranks, sms, dispatch_fp8, dispatch_bf16, combine} in GB/s, into `tables`; each dispatcher's table
/// needs its own source key "<field>.<name>".
std::vector<std::string> read_ep_kernel_rates(const ObjectReader& r, const std::string& field, const hw::GpuSpec& spec,
                                              std::map<std::string, hw::EpKernelTable, std::less<>>& tables) {
  std::vector<std::string> source_keys;
  const Json* value = r.get(field);
  if (!value) return source_keys;
  ObjectReader kernels(*value, r.path_of(field), kEpKernelNames);
  for (const auto& name : kEpKernelNames) {
    const Json* rows = kernels.get(name);
    if (!rows) continue;
    const std::string path = kernels.path_of(name);
    if (!rows->is_array() || rows->empty()) {
      throw InputError(path, describe_value(*rows), "expected a non-empty array of published rows");
    }
    hw::EpKernelTable table;
    for (std::size_t i = 0; i < rows->size(); ++i) {
      ObjectReader row((*rows)[i], path + "/" + std::to_string(i),
                       {"ranks", "sms", "dispatch_fp8", "dispatch_bf16", "combine"});
      hw::EpKernelRow out;
      out.ranks = row.require_int("ranks", IntRange{2, 1 << 20});
      out.sms = row.require_int("sms", IntRange{1, spec.sm_count});
      const NumberRange rate{0.0, 1e5, true};
      out.dispatch_fp8 = gigabytes_per_second(row.require_number("dispatch_fp8", rate));
      out.dispatch_bf16 = gigabytes_per_second(row.require_number("dispatch_bf16", rate));
      out.combine = gigabytes_per_second(row.require_number("combine", rate));
      for (const auto& seen : table.rows) {
        if (seen.ranks == out.ranks && seen.sms == out.sms) {
          throw InputError(row.path_of("sms"), std::to_string(out.sms),
                           "one row per (ranks, sms): " + std::to_string(out.ranks) + " ranks at this SM count appear twice");
        }
      }
      table.rows.push_back(out);
    }
    tables[name] = std::move(table);
    source_keys.push_back(field + "." + name);
  }
  return source_keys;
}

}  // namespace

hw::GpuSpec parse_gpu_spec(const Json& obj, const std::string& file) {
  try {
    ObjectReader r(obj, "",
                   {"name", "display_name", "architecture", "sm_count", "dense_peak_tflops", "hbm_capacity_gb",
                    "hbm_bandwidth_gbps", "nvlink_bandwidth_gbps", "gemm_peak_efficiency", "hbm_efficiency",
                    "attention_efficiency", "gemm_peak_efficiency_by_precision", "ep_kernel_algbw_gb_per_s",
                    "ep_kernel_rdma_gb_per_s", "sources"});
    hw::GpuSpec spec;
    spec.name = r.require_nonempty_string("name");
    spec.display_name = r.require_nonempty_string("display_name");
    spec.architecture = r.require_enum("architecture", {"ampere", "hopper", "blackwell"});
    spec.sustained_tensor_rate = fitted_tensor_rate(spec.architecture);  // the fit's, not the file's
    spec.sm_count = static_cast<int>(r.require_int("sm_count", IntRange{1, 4096}));
    read_dense_peaks(r, spec);
    // NVIDIA quotes HBM in binary units (DRAM dies come in powers of two): "80 GB" is 80 GiB.
    spec.hbm_capacity = Bytes(r.require_number("hbm_capacity_gb", NumberRange{0.0, 1e5, true}) * kGiB);
    spec.hbm_bandwidth = gigabytes_per_second(r.require_number("hbm_bandwidth_gbps", NumberRange{0.0, 1e6, true}));
    spec.nvlink_bandwidth = gigabytes_per_second(r.require_number("nvlink_bandwidth_gbps", NumberRange{0.0, 1e6, true}));
    spec.gemm_peak_efficiency = r.require_number("gemm_peak_efficiency", kFraction);
    spec.hbm_efficiency = r.require_number("hbm_efficiency", kFraction);
    spec.attention_efficiency = r.require_number("attention_efficiency", kFraction);
    std::vector<std::string> efficiency_sources = read_precision_efficiencies(r, spec);
    for (auto [field, tables] : {std::pair{"ep_kernel_algbw_gb_per_s", &spec.ep_kernel_algbw},
                                 std::pair{"ep_kernel_rdma_gb_per_s", &spec.ep_kernel_rdma}}) {
      const std::vector<std::string> sources = read_ep_kernel_rates(r, field, spec, *tables);
      efficiency_sources.insert(efficiency_sources.end(), sources.begin(), sources.end());
    }
    std::vector<std::string> per_precision;
    for (const auto& [p, rate] : spec.dense_peak) per_precision.push_back("dense_peak_tflops." + std::string(to_string(p)));
    std::vector<std::string> figures{"architecture", "sm_count", "dense_peak_tflops", "hbm_capacity_gb", "hbm_bandwidth_gbps",
                                     "nvlink_bandwidth_gbps", "gemm_peak_efficiency", "hbm_efficiency",
                                     "attention_efficiency"};
    // Every per-precision efficiency and every dispatcher table is a figure of its own and must cite its source.
    figures.insert(figures.end(), efficiency_sources.begin(), efficiency_sources.end());
    spec.sources = read_sources(r, figures, per_precision, "dense_peak_tflops", per_precision);
    return spec;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

hw::SystemSpec parse_system_spec(const Json& obj, const std::string& file) {
  try {
    ObjectReader r(obj, "",
                   {"name", "description", "gpu", "gpus_per_node", "host", "nvlink_domain_size", "nvls", "nics_per_gpu",
                    "nic_bandwidth_gbit", "nvlink_efficiency", "network_efficiency", "nvlink_latency_us",
                    "network_latency_us", "host_link_gb_per_s", "host_memory_gb_per_s", "sources"});
    hw::SystemSpec spec;
    spec.name = r.require_nonempty_string("name");
    spec.description = r.require_nonempty_string("description");
    spec.gpu = load_gpu_preset(r.require_string("gpu"), r.path_of("gpu"));
    spec.gpus_per_node = r.require_int("gpus_per_node", IntRange{1, 1024});
    spec.host = require_enum_value(r, "host", hw::kHostKindNames);
    spec.nvlink_domain_size = r.require_int("nvlink_domain_size", IntRange{1, 1 << 20});
    if (spec.nvlink_domain_size % spec.gpus_per_node != 0) {
      throw InputError(r.path_of("nvlink_domain_size"), std::to_string(spec.nvlink_domain_size),
                       "an NVLink domain spans whole nodes: must be a multiple of gpus_per_node (" +
                           std::to_string(spec.gpus_per_node) + ")");
    }
    spec.nvls = r.require_bool("nvls");
    spec.nics_per_gpu = r.require_int("nics_per_gpu", IntRange{1, 64});
    spec.nic_bandwidth = gigabits_per_second(r.require_number("nic_bandwidth_gbit", NumberRange{0.0, 1e5, true}));
    spec.nvlink_efficiency = r.require_number("nvlink_efficiency", kFraction);
    spec.network_efficiency = r.require_number("network_efficiency", kFraction);
    spec.nvlink_latency = microseconds(r.require_number("nvlink_latency_us", NumberRange{0.0, 1e6}));
    spec.network_latency = microseconds(r.require_number("network_latency_us", NumberRange{0.0, 1e6}));
    spec.host_link_bandwidth = BytesPerSecond(1e9 * r.require_number("host_link_gb_per_s", NumberRange{0.0, 1e5, true}));
    spec.host_memory_bandwidth = BytesPerSecond(1e9 * r.require_number("host_memory_gb_per_s", NumberRange{0.0, 1e5, true}));
    spec.sources = read_sources(r,
                                {"gpus_per_node", "host", "nvlink_domain_size", "nvls", "nics_per_gpu", "nic_bandwidth_gbit",
                                 "nvlink_efficiency", "network_efficiency", "nvlink_latency_us", "network_latency_us",
                                 "host_link_gb_per_s", "host_memory_gb_per_s"},
                                {}, "", {});
    return spec;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

std::vector<std::string> gpu_preset_names() { return embedded_json_names(kGpuDir); }

std::vector<std::string> system_preset_names() { return embedded_json_names(kSystemDir); }

namespace {

template <class Spec, class Parse>
Spec load_preset(std::string_view dir, const std::string& name, const std::string& path, const char* what,
                 Parse parse) {
  const auto files = embedded_json_in(dir);
  const auto it = std::find_if(files.begin(), files.end(), [&](const EmbeddedJson& f) { return f.name == name; });
  if (it == files.end()) {
    const std::vector<std::string> names = embedded_json_names(dir);
    throw InputError(path, json_quoted(name), std::string("unknown ") + what + did_you_mean(name, names), join(names));
  }
  const std::string file(it->file->path);
  Spec spec = parse(parse_json_text(std::string(it->file->content), file), file);
  if (spec.name != name) {
    throw InputError("/name", json_quoted(spec.name), "a preset's name must match its file name", json_quoted(name)).in_file(file);
  }
  return spec;
}

}  // namespace

hw::GpuSpec load_gpu_preset(const std::string& name, const std::string& path) {
  return load_preset<hw::GpuSpec>(kGpuDir, name, path, "GPU preset", parse_gpu_spec);
}

hw::SystemSpec load_system_preset(const std::string& name, std::int64_t gpus, const std::string& path) {
  hw::SystemSpec spec = load_preset<hw::SystemSpec>(kSystemDir, name, path, "system preset", parse_system_spec);
  spec.gpus = gpus;
  return spec;
}

}  // namespace moesim::config
