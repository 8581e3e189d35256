// `moesim models list|show|import`, `moesim systems list|show`, `moesim scenarios list|fields`: the built-in
// catalogue and the HuggingFace importer.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/summary.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/hw_loader.hpp"
#include "config/model_loader.hpp"
#include "core/file_io.hpp"
#include "model/counts.hpp"
#include "report/field_reference.hpp"
#include "report/result_json.hpp"

namespace moesim::cli {

void register_models(CLI::App& app, Commands& commands) {
  auto* models = app.add_subcommand("models", "Built-in model presets and the HuggingFace config.json importer.");
  models->require_subcommand(1);
  auto* list = models->add_subcommand("list", "List the model presets with their parameter counts.");
  list->callback([&commands] {
    commands.set([] {
      std::printf("%-18s %10s %10s %7s %8s  %s\n", "name", "total_B", "active_B", "layers", "experts", "source");
      for (const auto& name : config::model_preset_names()) {
        const auto m = config::load_model_preset(name);
        const auto c = model::count_params(m);
        std::printf("%-18s %10.2f %10.2f %7lld %8lld  %s\n", name.c_str(), c.total / 1e9, c.active / 1e9,
                    static_cast<long long>(m.num_layers), static_cast<long long>(m.num_moe_experts), m.source.c_str());
      }
      return 0;
    });
  });
  auto name = std::make_shared<std::string>();
  auto* show = models->add_subcommand("show", "Show one preset: shape, parameters, FLOPs per token, its definition.");
  show->add_option("name", *name, "preset name (`moesim models list`)")->required();
  show->callback([&commands, name] {
    commands.set([name] {
      const auto m = config::load_model_preset(*name, "model");
      std::fputs(format_model_summary(m).c_str(), stdout);
      std::printf("definition   %s\n", report::model_to_json(m).dump().c_str());
      return 0;
    });
  });
  struct ImportOptions {
    std::string file, json_out;
  };
  auto io = std::make_shared<ImportOptions>();
  auto* import = models->add_subcommand("import", "Import a HuggingFace config.json (Mixtral, DeepSeek, Qwen3-MoE, OLMoE, DBRX, Llama, ESM, ...).");
  import->add_option("config", io->file, "path to config.json")->required();
  import->add_option("--json", io->json_out, "write the model as a moesim definition (Megatron names) to this file");
  import->callback([&commands, io] {
    commands.set([io] {
      check_output_path_of("--json", io->json_out);
      const auto m = config::import_hf_config_file(io->file);
      std::fputs(format_model_summary(m).c_str(), stdout);
      if (!io->json_out.empty()) write_file_atomically(io->json_out, report::model_to_json(m).dump(2) + "\n");
      return 0;
    });
  });
}

void register_systems(CLI::App& app, Commands& commands) {
  auto* systems = app.add_subcommand("systems", "Built-in cluster presets and their GPUs.");
  systems->require_subcommand(1);
  auto* list = systems->add_subcommand("list", "List the cluster presets.");
  list->callback([&commands] {
    commands.set([] {
      std::printf("%-13s %-12s %9s %13s %10s  %s\n", "name", "gpu", "gpus/node", "nvlink_domain", "nic_Gbps", "description");
      for (const auto& name : config::system_preset_names()) {
        const auto s = config::load_system_preset(name, 1);
        std::printf("%-13s %-12s %9lld %13lld %10.0f  %s\n", name.c_str(), s.gpu.name.c_str(),
                    static_cast<long long>(s.gpus_per_node), static_cast<long long>(s.nvlink_domain_size),
                    s.nic_bandwidth.value() * 8.0 / 1e9, s.description.c_str());
      }
      return 0;
    });
  });
  auto name = std::make_shared<std::string>();
  auto* show = systems->add_subcommand("show", "Show one cluster preset and its GPU, every figure with its source.");
  show->add_option("name", *name, "preset name (`moesim systems list`)")->required();
  show->callback([&commands, name] {
    commands.set([name] {
      const auto s = config::load_system_preset(*name, 1, "system");
      const auto& g = s.gpu;
      std::printf("system          %s: %s\n", s.name.c_str(), s.description.c_str());
      std::printf("gpu             %s (%s, %s, %d SMs)\n", g.name.c_str(), g.display_name.c_str(), g.architecture.c_str(), g.sm_count);
      for (const auto& [p, rate] : g.dense_peak) {
        std::printf("peak_%-11s %.0f TFLOP/s dense\n", std::string(to_string(p)).c_str(), rate.value() / 1e12);
      }
      std::printf("hbm             %.1f GB, %.0f GB/s\n", g.hbm_capacity.value() / 1e9, g.hbm_bandwidth.value() / 1e9);
      std::printf("nvlink          %.0f GB/s per GPU per direction, domain of %lld GPUs%s\n", g.nvlink_bandwidth.value() / 1e9,
                  static_cast<long long>(s.nvlink_domain_size), s.nvls ? ", NVLink SHARP" : "");
      std::printf("network         %lld NIC(s) per GPU × %.0f Gb/s\n", static_cast<long long>(s.nics_per_gpu),
                  s.nic_bandwidth.value() * 8.0 / 1e9);
      std::printf("efficiencies    gemm %.3f, hbm %.3f, attention %.3f, nvlink %.3f, network %.3f\n", g.gemm_peak_efficiency,
                  g.hbm_efficiency, g.attention_efficiency, s.nvlink_efficiency, s.network_efficiency);
      std::printf("latency         nvlink %.1f us, network %.1f us per step\n", s.nvlink_latency.value() * 1e6,
                  s.network_latency.value() * 1e6);
      std::printf("sources\n");
      for (const auto& [k, v] : g.sources) std::printf("  gpu.%s: %s\n", k.c_str(), v.c_str());
      for (const auto& [k, v] : s.sources) std::printf("  %s: %s\n", k.c_str(), v.c_str());
      return 0;
    });
  });
}

void register_scenarios(CLI::App& app, Commands& commands) {
  auto* scenarios = app.add_subcommand("scenarios", "Scenarios built into the binary, and scenarios from Megatron-LM command lines.");
  scenarios->alias("scenario");
  scenarios->require_subcommand(1);
  auto* list = scenarios->add_subcommand("list", "List the built-in scenarios (usable as `moesim simulate NAME`).");
  list->callback([&commands] {
    commands.set([] {
      for (const auto& name : config::builtin_scenario_names()) {
        const auto s = config::load_builtin_scenario(name);
        std::printf("%-30s %s\n", name.c_str(), s ? s->name.c_str() : "");
      }
      return 0;
    });
  });
  auto* fields = scenarios->add_subcommand(
      "fields", "Print the scenario field reference (Markdown: docs/scenario-fields.md) from the field tables.");
  fields->callback([&commands] {
    commands.set([] {
      std::fputs(report::scenario_field_reference().c_str(), stdout);
      return 0;
    });
  });
  register_from_megatron(*scenarios, commands);
}

}  // namespace moesim::cli
