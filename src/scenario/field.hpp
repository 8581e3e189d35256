#pragma once
// What a field table says of one input field besides its member and range: its key, what it means,
// whether it must be given, and where its default does not come from the struct's own initializer.
// The tables (scenario_fields.hpp) are visited by the loader, the result echo, the generated field
// reference and the CLI, so none of them spells a key, a default or a range again.
#include <string_view>

namespace moesim {

struct FieldInfo {
  std::string_view key;
  std::string_view doc;  ///< one sentence for the field reference and the CLI's help
  /// The `moesim plan` flag that sets it instead of a scenario file ("" = none).
  std::string_view cli_flag = {};
  bool required = false;
  /// A default computed from fields read before it ("tp", "gpus / (tp·cp·pp)"): the table passes the
  /// computation beside it. "" = the default is the struct member's initializer.
  std::string_view derived_default = {};
};

/// How a derived default is computed from the fields read before it.
template <typename Whole, typename T>
using DeriveFn = T (*)(const Whole&);

}  // namespace moesim
