#include "cli/memory_timeline_text.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace moesim::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// A pass of the timeline: its points [first, end) and the one that held the most.
struct PassRow {
  std::size_t first = 0, end = 0, top = 0;
};

std::vector<PassRow> pass_rows(const memory::MemoryTimeline& t) {
  std::vector<PassRow> rows;
  for (std::size_t i = 0; i < t.points.size(); ++i) {
    if (rows.empty() || t.points[i].op.pass != t.points[rows.back().first].op.pass) rows.push_back({i, i, i});
    PassRow& r = rows.back();
    r.end = i + 1;
    if (t.points[i].running_bytes > t.points[r.top].running_bytes) r.top = i;
  }
  return rows;
}

const char* op_name(memory::TimelineOpKind k) {
  switch (k) {
    case memory::TimelineOpKind::kEmbedding:
      return "embedding";
    case memory::TimelineOpKind::kLayer:
      return "layer";
    case memory::TimelineOpKind::kMtp:
      return "mtp";
    case memory::TimelineOpKind::kOutputHead:
      return "output_head";
  }
  return "?";
}

}  // namespace

std::string timeline_text(const memory::MemoryTimeline& t, std::size_t max_passes) {
  const std::vector<PassRow> rows = pass_rows(t);
  std::string out = fmt::format("timeline of pipeline stage {}: {} passes, {} ops; baseline {:.2f} GiB", t.stage,
                                rows.size(), t.points.size(), t.baseline_bytes / kGiB);
  if (t.points.empty()) return out + "\n";
  out += fmt::format(", peak {:.2f} GiB at {}\n", t.peak_bytes() / kGiB, memory::describe(t.points[t.peak_index].op));
  // Which passes to show: all of them, or the warm-up up to a few steady passes, the passes around
  // the peak and the last few (the cool-down's end, back at the baseline).
  std::vector<bool> show(rows.size(), rows.size() <= max_passes);
  if (rows.size() > max_passes) {
    std::size_t first_backward = rows.size();
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (t.points[rows[r].first].op.backward) {
        first_backward = r;
        break;
      }
    }
    const auto peak_pass = static_cast<std::size_t>(t.points[t.peak_index].op.pass);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      show[r] = r < first_backward + 4 || (r + 3 >= peak_pass && r <= peak_pass + 3) || r + 4 >= rows.size();
    }
  }
  out += fmt::format("{:>6} {:>3} {:>5} {:>5} {:>9} {:>9}  {}\n", "pass", "dir", "mb", "chunk", "end_GiB", "max_GiB",
                     "max at");
  std::size_t hidden = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (!show[r]) {
      ++hidden;
      continue;
    }
    if (hidden > 0) out += fmt::format("{:>6} ({} passes not shown; --timeline-csv FILE writes every op)\n", "...", hidden);
    hidden = 0;
    const memory::TimelinePoint& top = t.points[rows[r].top];
    out += fmt::format("{:>6} {:>3} {:>5} {:>5} {:>9.2f} {:>9.2f}  {}{}\n", top.op.pass, top.op.backward ? "B" : "F",
                       top.op.microbatch, top.op.chunk, t.points[rows[r].end - 1].bytes / kGiB,
                       top.running_bytes / kGiB, memory::describe_kind(top.op),
                       rows[r].top == t.peak_index ? "  <- peak" : "");
  }
  return out;
}

std::string timeline_csv(const memory::MemoryTimeline& t) {
  std::string out = "pass,microbatch,chunk,direction,op,layer,moe,running_bytes,bytes\n";
  for (const memory::TimelinePoint& p : t.points) {
    out += fmt::format("{},{},{},{},{},{},{},{:.0f},{:.0f}\n", p.op.pass, p.op.microbatch, p.op.chunk,
                       p.op.backward ? "backward" : "forward", op_name(p.op.kind), p.op.layer, p.op.moe ? 1 : 0,
                       p.running_bytes, p.bytes);
  }
  return out;
}

}  // namespace moesim::cli
