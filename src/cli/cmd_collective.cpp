// `moesim collective --system PRESET --gpus N --op OP --bytes N[:M] [--json OUT]
//  [--fidelity estimate|simulation] [--algo A]`: a nccl-tests-like table of predicted collectives.
#include <cstdio>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "collective/algorithms.hpp"
#include "collective/flow_collective.hpp"
#include "config/hw_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "hw/topology.hpp"
#include "report/collective_json.hpp"

namespace moesim::cli {
namespace {

// "1048576", "64K", "1M", "8G" (binary multiples, as nccl-tests' -b/-e take them).
double parse_size(const std::string& text, const std::string& whole) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw InputError("--bytes", whole, "not a size", "N or N:M with optional K, M, G suffix (e.g. 1M:1G)");
  }
  const std::string suffix = text.substr(used);
  if (suffix == "K" || suffix == "k") v *= 1024.0;
  else if (suffix == "M" || suffix == "m") v *= 1024.0 * 1024.0;
  else if (suffix == "G" || suffix == "g") v *= 1024.0 * 1024.0 * 1024.0;
  else if (!suffix.empty()) throw InputError("--bytes", whole, "unknown size suffix '" + suffix + "'", "K, M, G");
  if (!(v >= 1.0) || v > 1e13) throw InputError("--bytes", whole, "sizes must be from 1 B to 10 TB");
  return v;
}

}  // namespace

void register_collective(CLI::App& app, Commands& commands) {
  struct Options {
    std::string system, op = "all_reduce", bytes = "1M", json_out, fidelity = "estimate", algo = "auto";
    std::int64_t gpus = 8;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("collective", "Predict NCCL collectives (nccl-tests columns: algbw, busbw).");
  sub->add_option("--system", opt->system, "cluster preset (`moesim systems list`)")->required();
  sub->add_option("--gpus", opt->gpus, "GPUs in the group (GPUs 0..N-1 of the system)")->capture_default_str();
  sub->add_option("--op", opt->op, "all_reduce, all_gather, reduce_scatter, alltoall, sendrecv")
      ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"}))
      ->capture_default_str();
  sub->add_option("--bytes", opt->bytes, "size N or sweep N:M (×2 steps), nccl-tests size convention; K/M/G suffixes")
      ->capture_default_str();
  sub->add_option("--json", opt->json_out, "write the rows as JSON");
  sub->add_option("--fidelity", opt->fidelity, "estimate (closed form) or simulation (flows on the topology)")
      ->check(CLI::IsMember({"estimate", "simulation"}))
      ->capture_default_str();
  sub->add_option("--algo", opt->algo, "auto, ring, tree, nvls, direct, hierarchical")
      ->check(CLI::IsMember({"auto", "ring", "tree", "nvls", "direct", "hierarchical"}))
      ->capture_default_str();
  sub->callback([opt, &commands] {
    commands.set([opt] {
      check_output_path_of("--json", opt->json_out);
      if (opt->gpus < 1 || opt->gpus > 1048576) {
        throw InputError("--gpus", std::to_string(opt->gpus), "out of range", "1 to 1048576");
      }
      const auto sys = config::load_system_preset(opt->system, opt->gpus, "--system");
      const collective::Op op = *collective::op_from_string(opt->op);
      std::optional<collective::Algorithm> algo;
      if (opt->algo != "auto") algo = collective::algorithm_from_string(opt->algo);
      double lo = 0, hi = 0;
      if (auto colon = opt->bytes.find(':'); colon != std::string::npos) {
        lo = parse_size(opt->bytes.substr(0, colon), opt->bytes);
        hi = parse_size(opt->bytes.substr(colon + 1), opt->bytes);
      } else {
        lo = hi = parse_size(opt->bytes, opt->bytes);
      }
      if (hi < lo) throw InputError("--bytes", opt->bytes, "the sweep's end is below its start");
      std::vector<std::int32_t> ranks(static_cast<std::size_t>(opt->gpus));
      std::iota(ranks.begin(), ranks.end(), 0);
      if (op == collective::Op::kSendRecv) ranks = {0, static_cast<std::int32_t>(opt->gpus - 1)};
      const auto placement = collective::place_group(sys, static_cast<std::int64_t>(ranks.size()), 1);
      if (algo) {
        const auto ok = collective::applicable_algorithms(sys, op, placement);
        if (std::find(ok.begin(), ok.end(), *algo) == ok.end()) {
          std::vector<std::string> names;
          for (auto a : ok) names.emplace_back(collective::to_string(a));
          throw InputError("--algo", opt->algo, "does not apply to " + opt->op + " on this group", fmt::format("{}", fmt::join(names, ", ")));
        }
      }
      std::optional<hw::Topology> topo;
      if (opt->fidelity == "simulation") topo = hw::build_topology(sys);
      std::vector<report::CollectiveRow> rows;
      std::printf("# moesim collective: %s on %lld GPUs of %s, fidelity %s\n", opt->op.c_str(),
                  static_cast<long long>(ranks.size()), sys.name.c_str(), opt->fidelity.c_str());
      std::printf("%14s %12s %12s %12s  %s\n", "size(B)", "time_us", "algbw_GBps", "busbw_GBps", "algorithm");
      for (double size = lo; size <= hi * (1 + 1e-12); size *= 2) {
        report::CollectiveRow row;
        row.op = opt->op;
        row.gpus = static_cast<std::int64_t>(ranks.size());
        row.bytes = size;
        row.fidelity = opt->fidelity;
        const auto est = collective::best_collective(sys, op, Bytes(size), placement, algo);
        if (topo) {
          collective::CollectiveRequest req;
          req.op = op;
          req.bytes = Bytes(size);
          req.ranks = ranks;
          req.algorithm = algo ? algo : std::optional<collective::Algorithm>(est.algorithm);
          const auto outcome = collective::simulate_collectives(*topo, sys, {req}).at(0);
          row.time_s = outcome.time.value();
          row.algorithm = std::string(collective::to_string(outcome.algorithm));
        } else {
          row.time_s = est.time.value();
          row.algorithm = std::string(collective::to_string(est.algorithm)) + "/" + std::string(collective::to_string(est.protocol));
        }
        row.algbw_GBps = row.time_s > 0 ? size / row.time_s / 1e9 : 0;
        row.busbw_GBps = row.algbw_GBps * collective::busbw_factor(op, row.gpus);
        std::printf("%14.0f %12.2f %12.2f %12.2f  %s\n", size, row.time_s * 1e6, row.algbw_GBps, row.busbw_GBps,
                    row.algorithm.c_str());
        rows.push_back(row);
      }
      if (!opt->json_out.empty()) write_file_atomically(opt->json_out, report::collective_rows_to_json_text(rows));
      return 0;
    });
  });
}

}  // namespace moesim::cli
