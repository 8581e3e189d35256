#include "config/routing_histogram.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "config/json_reader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace moesim::config {
namespace {

/// No router routes 10^15 tokens to one expert in a step; larger counts are typos or garbage.
constexpr double kMaxTokens = 1e15;
const char* const kColumns = "step, layer, expert, tokens";

/// What the file must match: the model's expert count and its number of MoE layers.
struct Shape {
  std::int64_t experts = 0;
  std::int64_t layers = 0;
};

std::string index_range(std::int64_t n) { return n == 1 ? "0" : fmt::format("0-{}", n - 1); }

std::string layer_count_rule(std::int64_t found, std::int64_t want) {
  return fmt::format("the histogram has {} MoE layer{} but the model has {} (one entry per MoE layer, in model order)",
                     found, found == 1 ? "" : "s", want);
}

std::string expert_count_rule(std::int64_t found, std::int64_t want) {
  return fmt::format("the histogram has {} expert{} per layer but the model has num_moe_experts = {}", found,
                     found == 1 ? "" : "s", want);
}

/// A layer with no tokens at all has no shares; it is refused here rather than divided by zero later.
void check_layer_total(const std::vector<double>& tokens, const std::string& where) {
  if (std::accumulate(tokens.begin(), tokens.end(), 0.0) > 0) return;
  throw InputError(where, "total 0", "every token count of this layer is 0, so its expert shares are undefined",
                   "a layer with at least one token");
}

// ---------------------------------------------------------------------------------------------
// CSV

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_index(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

/// A field as the message shows it: numbers as written, anything else quoted (cut to 60 characters).
std::string shown(std::string_view field) {
  if (parse_number(field)) return std::string(field);
  return describe_value(Json(std::string(field)));
}

/// A CSV line with its number (1-based) in the file.
struct Line {
  std::size_t number = 0;
  std::string_view text;
};

/// The lines that carry content: blank lines and `#` comments are skipped.
std::vector<Line> content_lines(std::string_view text) {
  std::vector<Line> out;
  std::size_t number = 0, start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    const std::string_view raw = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    ++number;
    const std::string_view t = trim(raw);
    if (!t.empty() && t.front() != '#') out.push_back({number, t});
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

/// Column positions from the header; step is optional (-1 when absent).
struct Columns {
  int step = -1, layer = -1, expert = -1, tokens = -1;
  std::size_t count = 0;
};

Columns read_header(const Line& header) {
  Columns c;
  const std::vector<std::string_view> names = split_fields(header.text);
  c.count = names.size();
  for (std::size_t i = 0; i < names.size(); ++i) {
    int* slot = names[i] == "step"     ? &c.step
                : names[i] == "layer"  ? &c.layer
                : names[i] == "expert" ? &c.expert
                : names[i] == "tokens" ? &c.tokens
                                       : nullptr;
    const std::string where = fmt::format("line {}, column {}", header.number, i + 1);
    if (!slot) throw InputError(where, shown(names[i]), "unknown column in the header", kColumns);
    if (*slot >= 0) throw InputError(where, shown(names[i]), "column listed twice in the header", kColumns);
    *slot = static_cast<int>(i);
  }
  for (const auto& [slot, name] : {std::pair{c.layer, "layer"}, {c.expert, "expert"}, {c.tokens, "tokens"}}) {
    if (slot < 0) {
      throw InputError(fmt::format("line {}", header.number), shown(header.text),
                       fmt::format("the header lacks the '{}' column", name),
                       "layer,expert,tokens or step,layer,expert,tokens");
    }
  }
  return c;
}

struct Row {
  std::int64_t step = 0, layer = 0, expert = 0;
  double tokens = 0;
  std::size_t line = 0;
};

std::int64_t read_index(std::string_view field, const std::string& where, const char* what) {
  const auto v = parse_index(field);
  if (!v) throw InputError(where, shown(field), fmt::format("expected a non-negative integer ({} index)", what));
  return *v;
}

double read_tokens(std::string_view field, const std::string& where) {
  const auto v = parse_number(field);
  if (!v) throw InputError(where, shown(field), "expected a number (tokens routed to this expert)", "numbers >= 0");
  if (*v < 0) throw InputError(where, shown(field), "negative token count", "numbers >= 0");
  if (*v > kMaxTokens)
    throw InputError(where, shown(field), "absurd token count", fmt::format("numbers >= 0 and <= {:g}", kMaxTokens));
  return *v;
}

Row read_row(const Line& line, const Columns& c, const Shape& shape) {
  const std::vector<std::string_view> f = split_fields(line.text);
  if (f.size() != c.count) {
    throw InputError(fmt::format("line {}", line.number), shown(line.text),
                     fmt::format("expected {} comma-separated fields, as in the header, got {}", c.count, f.size()));
  }
  auto where = [&](const char* column) { return fmt::format("line {}, column {}", line.number, column); };
  auto field = [&](int i) { return f[static_cast<std::size_t>(i)]; };
  Row r;
  r.line = line.number;
  if (c.step >= 0) r.step = read_index(field(c.step), where("step"), "step");
  r.layer = read_index(field(c.layer), where("layer"), "MoE layer");
  if (r.layer >= shape.layers) {
    throw InputError(
        where("layer"), shown(field(c.layer)),
        fmt::format("MoE layer index beyond the model's {} MoE layers (0 = the first MoE layer)", shape.layers),
        index_range(shape.layers));
  }
  r.expert = read_index(field(c.expert), where("expert"), "expert");
  if (r.expert >= shape.experts) {
    throw InputError(where("expert"), shown(field(c.expert)),
                     fmt::format("expert index beyond the model's {} experts (num_moe_experts)", shape.experts),
                     index_range(shape.experts));
  }
  r.tokens = read_tokens(field(c.tokens), where("tokens"));
  return r;
}

/// "step 3, layer 2" or "layer 2" when the file has no step column.
std::string place(bool has_step, std::int64_t step, std::int64_t layer) {
  return has_step ? fmt::format("step {}, layer {}", step, layer) : fmt::format("layer {}", layer);
}

/// Too few experts or layers in the whole file is said as such, before any single missing row.
void check_counts(const std::vector<Row>& rows, const Shape& shape) {
  std::int64_t max_layer = -1, max_expert = -1;
  for (const Row& r : rows) {
    max_layer = std::max(max_layer, r.layer);
    max_expert = std::max(max_expert, r.expert);
  }
  if (max_expert + 1 < shape.experts) {
    throw InputError("column expert", std::to_string(max_expert + 1), expert_count_rule(max_expert + 1, shape.experts),
                     std::to_string(shape.experts));
  }
  if (max_layer + 1 < shape.layers) {
    throw InputError("column layer", std::to_string(max_layer + 1), layer_count_rule(max_layer + 1, shape.layers),
                     std::to_string(shape.layers));
  }
}

/// Rows sorted by (step, layer, expert, line) → tokens[step][layer][expert]; every (layer, expert)
/// exactly once per step.
std::vector<std::vector<std::vector<double>>> assemble(std::vector<Row> rows, bool has_step, const Shape& shape) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.step, a.layer, a.expert, a.line) < std::tie(b.step, b.layer, b.expert, b.line);
  });
  std::vector<std::vector<std::vector<double>>> out;
  std::size_t i = 0;
  while (i < rows.size()) {
    const std::int64_t step = rows[i].step;
    auto& layers = out.emplace_back();
    for (std::int64_t l = 0; l < shape.layers; ++l) {
      auto& experts = layers.emplace_back();
      for (std::int64_t e = 0; e < shape.experts; ++e) {
        if (i >= rows.size() || rows[i].step != step || rows[i].layer != l || rows[i].expert != e) {
          throw InputError(place(has_step, step, l) + fmt::format(", expert {}", e), "",
                           "no row for this (layer, expert): every expert of every MoE layer must appear once" +
                               std::string(has_step ? " per step" : ""));
        }
        if (i + 1 < rows.size() && rows[i + 1].step == step && rows[i + 1].layer == l && rows[i + 1].expert == e) {
          throw InputError(
              fmt::format("line {}", rows[i + 1].line), "",
              fmt::format("{}, expert {} appears twice (first at line {})", place(has_step, step, l), e, rows[i].line));
        }
        experts.push_back(rows[i++].tokens);
      }
      check_layer_total(experts, place(has_step, step, l));
    }
  }
  return out;
}

std::vector<std::vector<std::vector<double>>> parse_csv(std::string_view text, const Shape& shape) {
  const std::vector<Line> lines = content_lines(text);
  if (lines.empty()) {
    throw InputError("", "",
                     "empty histogram file: expected a header 'layer,expert,tokens' and one row per (layer, expert)");
  }
  const Columns columns = read_header(lines.front());
  if (lines.size() == 1) {
    throw InputError(fmt::format("line {}", lines.front().number), "", "the header is followed by no rows",
                     fmt::format("one row per (layer, expert): {} x {}", shape.layers, shape.experts));
  }
  std::vector<Row> rows;
  rows.reserve(lines.size() - 1);
  for (std::size_t i = 1; i < lines.size(); ++i) rows.push_back(read_row(lines[i], columns, shape));
  check_counts(rows, shape);
  return assemble(std::move(rows), columns.step >= 0, shape);
}

// ---------------------------------------------------------------------------------------------
// JSON

std::vector<double> read_json_layer(const Json& v, const std::string& path, const Shape& shape) {
  if (!v.is_array())
    throw InputError(path, describe_value(v),
                     "expected a list of token counts, one per expert, got " + describe_type(v));
  const auto n = static_cast<std::int64_t>(v.size());
  if (n != shape.experts)
    throw InputError(path, std::to_string(n) + " counts", expert_count_rule(n, shape.experts),
                     std::to_string(shape.experts));
  std::vector<double> out;
  out.reserve(v.size());
  for (std::size_t e = 0; e < v.size(); ++e) {
    const std::string p = path + "/" + std::to_string(e);
    const Json& x = v[e];
    if (!x.is_number())
      throw InputError(p, describe_value(x), "expected a number, got " + describe_type(x), "numbers >= 0");
    const double t = x.get<double>();
    if (t < 0) throw InputError(p, describe_value(x), "negative token count", "numbers >= 0");
    if (!std::isfinite(t) || t > kMaxTokens)
      throw InputError(p, describe_value(x), "absurd token count", fmt::format("numbers >= 0 and <= {:g}", kMaxTokens));
    out.push_back(t);
  }
  check_layer_total(out, path);
  return out;
}

std::vector<std::vector<double>> read_json_layers(const Json& v, const std::string& path, const Shape& shape) {
  if (!v.is_array())
    throw InputError(path, describe_value(v),
                     "expected a list with one list of counts per MoE layer, got " + describe_type(v));
  const auto n = static_cast<std::int64_t>(v.size());
  if (n != shape.layers)
    throw InputError(path, std::to_string(n) + " layers", layer_count_rule(n, shape.layers),
                     std::to_string(shape.layers));
  std::vector<std::vector<double>> out;
  for (std::size_t l = 0; l < v.size(); ++l)
    out.push_back(read_json_layer(v[l], path + "/" + std::to_string(l), shape));
  return out;
}

std::vector<std::vector<std::vector<double>>> parse_json(std::string_view text, const std::string& file,
                                                         const Shape& shape) {
  const Json obj = parse_json_text(std::string(text), file);
  const ObjectReader r(obj, "", {"schema", "experts", "layers", "steps"});
  if (!r.has("schema")) throw InputError("/schema", "", "required field is missing", kRoutingHistogramSchema);
  const Json& schema = *r.get("schema");
  if (!schema.is_string() || schema.get<std::string>() != kRoutingHistogramSchema) {
    throw InputError("/schema", describe_value(schema), "unsupported routing histogram schema",
                     kRoutingHistogramSchema);
  }
  const std::int64_t experts = r.require_int("experts");
  if (experts != shape.experts) {
    throw InputError("/experts", std::to_string(experts), expert_count_rule(experts, shape.experts),
                     std::to_string(shape.experts));
  }
  if (r.has("layers") == r.has("steps")) {
    throw InputError(r.has("layers") ? "/steps" : "/layers", "",
                     "give either \"layers\" (one measurement) or \"steps\" (a list of them), exactly one",
                     "layers, steps");
  }
  std::vector<std::vector<std::vector<double>>> out;
  if (const Json* layers = r.get("layers")) {
    out.push_back(read_json_layers(*layers, "/layers", shape));
    return out;
  }
  const Json& steps = *r.get("steps");
  if (!steps.is_array() || steps.empty()) {
    throw InputError("/steps", describe_value(steps), "expected a non-empty list of steps, each a list of MoE layers");
  }
  for (std::size_t s = 0; s < steps.size(); ++s)
    out.push_back(read_json_layers(steps[s], "/steps/" + std::to_string(s), shape));
  return out;
}

// ---------------------------------------------------------------------------------------------

std::vector<std::int64_t> moe_layer_map(const model::ModelSpec& model) {
  std::vector<std::int64_t> out;
  std::int64_t next = 0;
  for (std::int64_t l = 0; l < model.num_layers; ++l) out.push_back(model.layer_is_moe(l) ? next++ : -1);
  return out;
}

std::string lower_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

}  // namespace

bool histogram_format_known(const std::filesystem::path& path) {
  const std::string ext = lower_extension(path);
  return ext == ".csv" || ext == ".json";
}

HistogramFormat histogram_format_of(const std::filesystem::path& path) {
  return lower_extension(path) == ".json" ? HistogramFormat::kJson : HistogramFormat::kCsv;
}

RoutingHistogram parse_routing_histogram(std::string_view text, HistogramFormat format, const std::string& file,
                                         const model::ModelSpec& model) {
  try {
    const Shape shape{model.num_moe_experts, model.num_moe_layers()};
    if (shape.experts < 1 || shape.layers < 1) {
      throw InternalError("routing histogram " + file + ": the model has no MoE layer to read it for");
    }
    RoutingHistogram h;
    h.file = file;
    h.experts = shape.experts;
    h.tokens = format == HistogramFormat::kJson ? parse_json(text, file, shape) : parse_csv(text, shape);
    h.moe_layer_of = moe_layer_map(model);
    return h;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

RoutingHistogram load_routing_histogram(const std::filesystem::path& path, const model::ModelSpec& model) {
  // read_text_file names the file in its own errors (missing, a directory, unreadable).
  return parse_routing_histogram(read_text_file(path), histogram_format_of(path), path.string(), model);
}

}  // namespace moesim::config
