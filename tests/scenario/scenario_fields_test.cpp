// The scenario field tables (scenario/scenario_fields.hpp): every key declared once per object, every
// field described, ranges that admit their own defaults, flags that are unique, and the lookup the
// CLI uses.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scenario/field_lookup.hpp"
#include "scenario/scenario_fields.hpp"

using namespace moesim;

namespace {

/// Every field as "path", with what a test checks of it.
struct Seen {
  std::map<std::string, std::vector<std::string>> keys_by_object;  ///< object path → its keys in order
  std::vector<std::string> problems;
  std::set<std::string> flags;
};

class Inspector {
 public:
  Inspector(Seen& seen, std::string object) : seen_(seen), object_(std::move(object)) {}

  template <typename Inner>
  void section(const FieldInfo& info, Inner&& inner) {
    note(info);
    Inspector child(seen_, path(info));
    inner(child);
  }
  template <typename... A> void special(const FieldInfo& info, A&&...) { note(info); }
  template <typename... A> void constant(const FieldInfo& info, A&&...) { note(info); }
  template <typename... A> void text(const FieldInfo& info, A&&...) { note(info); }
  template <typename T, typename... A>
  void integer(const FieldInfo& info, const T& member, IntRange range, A&&... derive) {
    note(info);
    if (range.min > range.max) problem(info, "empty range");
    // A default must be a value the loader itself would accept (required and derived ones are not read from the member).
    const bool derived = sizeof...(derive) > 0 && !info.derived_default.empty();
    if (!info.required && !derived) {
      const auto v = static_cast<std::int64_t>(member);
      if (v < range.min || v > range.max) problem(info, "default outside its range");
    }
    if (sizeof...(derive) > 0 && info.derived_default.empty()) problem(info, "a derived default without its text");
  }
  template <typename T>
  void optional_integer(const FieldInfo& info, const T& member, IntRange range) {
    note(info);
    if (member) problem(info, "an optional field set by default");
    if (range.min > range.max) problem(info, "empty range");
  }
  template <typename T>
  void number(const FieldInfo& info, const T& member, NumberRange range) {
    note(info);
    if (member < range.min || member > range.max || (range.min_exclusive && member == range.min)) {
      problem(info, "default outside its range");
    }
  }
  template <typename T>
  void optional_number(const FieldInfo& info, const T& member, NumberRange range) {
    note(info);
    if (member) problem(info, "an optional field set by default");
    if (range.min > range.max) problem(info, "empty range");
  }
  template <typename... A>
  void boolean(const FieldInfo& info, const bool& /*member*/, A&&... derive) {
    note(info);
    if (sizeof...(derive) > 0 && info.derived_default.empty()) problem(info, "a derived default without its text");
  }
  template <typename E, std::size_t N>
  void enumeration(const FieldInfo& info, const E& member, const EnumNames<E, N>& table) {
    note(info);
    if (name_of(table, member, "").empty()) problem(info, "default not in its name table");
  }
  template <typename E, std::size_t N>
  void enumeration_list(const FieldInfo& info, const std::vector<E>& member, const EnumNames<E, N>& table) {
    note(info);
    for (const E e : member) {
      if (name_of(table, e, "").empty()) problem(info, "default not in its name table");
    }
  }

 private:
  [[nodiscard]] std::string path(const FieldInfo& info) const {
    return object_.empty() ? std::string(info.key) : object_ + "." + std::string(info.key);
  }
  void problem(const FieldInfo& info, const std::string& what) { seen_.problems.push_back(path(info) + ": " + what); }
  void note(const FieldInfo& info) {
    auto& keys = seen_.keys_by_object[object_];
    for (const auto& k : keys) {
      if (k == info.key) problem(info, "key declared twice");
    }
    keys.emplace_back(info.key);
    if (info.doc.empty()) problem(info, "no doc");
    if (!info.cli_flag.empty() && !seen_.flags.insert(std::string(info.cli_flag)).second) problem(info, "flag used twice");
    if (info.required && !info.derived_default.empty()) problem(info, "required and defaulted");
  }

  Seen& seen_;
  std::string object_;
};

}  // namespace

TEST_CASE("field tables: keys once per object, described, defaults inside their ranges") {
  Seen seen;
  const Scenario defaults;
  Inspector inspector(seen, "");
  scenario_fields::visit_scenario(inspector, defaults);
  std::string problems;
  for (const auto& p : seen.problems) problems += p + "\n";
  INFO(problems);
  CHECK(seen.problems.empty());
  // The objects the loader reads with a table, and their keys in reading order.
  CHECK(seen.keys_by_object[""] == std::vector<std::string>{"schema", "name", "model", "system", "training", "parallel",
                                                             "precision", "fp8_recipe", "recompute", "moe", "optimizer",
                                                             "runtime", "offload", "whatif", "seed", "flops_convention"});
  CHECK(seen.keys_by_object["training"] ==
        std::vector<std::string>{"seq_length", "micro_batch_size", "global_batch_size", "attention_backend"});
  CHECK(seen.keys_by_object["parallel"].size() == 11);
  CHECK(seen.keys_by_object["moe"].size() == 10);
  CHECK(seen.keys_by_object["moe.placement"] ==
        std::vector<std::string>{"strategy", "redundant_experts", "rebalance_interval_steps", "profile"});
  CHECK(seen.keys_by_object["optimizer"].size() == 7);
  CHECK(seen.keys_by_object["runtime"] == std::vector<std::string>{"cuda_graph", "host", "fusions"});
  CHECK(seen.keys_by_object["offload"] == std::vector<std::string>{"activations", "optimizer_fraction"});
  CHECK(seen.keys_by_object["whatif"] == std::vector<std::string>{"kernel_speedup"});
  CHECK(seen.keys_by_object["whatif.kernel_speedup"] ==
        std::vector<std::string>{"attention", "attention_proj", "dense_mlp", "shared_expert", "expert_mlp", "router",
                                 "permute", "dispatch", "combine", "lm_head", "optimizer"});
  CHECK(seen.flags == std::set<std::string>{"--seq", "--global-batch", "--host-sync-idle-s"});
}

TEST_CASE("find_field: the CLI's lookup by dotted path") {
  const auto seq = scenario_fields::find_field("training.seq_length");
  REQUIRE(seq.has_value());
  CHECK(seq->info.cli_flag == "--seq");
  CHECK(seq->info.required);
  REQUIRE(seq->int_range.has_value());
  CHECK(seq->int_range->min == 1);
  CHECK(seq->int_range->max == 16'777'216);

  const auto idle = scenario_fields::find_field("moe.host_sync_idle_s");
  REQUIRE(idle.has_value());
  REQUIRE(idle->number_range.has_value());
  CHECK(idle->number_range->max == 1.0);
  CHECK_FALSE(idle->int_range.has_value());

  const auto etp = scenario_fields::find_field("parallel.etp");
  REQUIRE(etp.has_value());
  CHECK(etp->info.derived_default == "tp");

  CHECK_FALSE(scenario_fields::find_field("training.nosuch").has_value());
  CHECK_FALSE(scenario_fields::find_field("seq_length").has_value());  // paths are full: training.seq_length
}
