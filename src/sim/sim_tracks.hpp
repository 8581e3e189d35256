#pragma once
// Records what the step simulation ran into a Timeline (one process per simulated rank, one track
// per stream), for the Chrome/Perfetto trace.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/sim_time.hpp"
#include "program/layer_cost.hpp"
#include "scenario/scenario.hpp"
#include "record/timeline.hpp"
#include "schedule/pipeline_schedule.hpp"

namespace moesim::sim {

/// Streams of a rank, in display order.
enum class Track : std::int32_t { kCompute = 0, kTp, kCp, kEp, kPp, kDp, kHost };

class TrackRecorder {
 public:
  TrackRecorder(Timeline& timeline, std::size_t ranks);

  /// A kernel or blocking collective of a layer; returns the event's index.
  std::int64_t layer_op(std::size_t rank, const program::LayerOp& op, engine::SimTime start, engine::SimTime end,
                        const schedule::PipelinePass& pass);
  /// The host issuing an op (program/host_ops: its framework ops), on the rank's host track.
  std::int64_t host_op(std::size_t rank, const program::LayerOp& op, engine::SimTime start, engine::SimTime end,
                       const schedule::PipelinePass& pass);
  /// A pipeline send or a data-parallel collective on its own stream.
  std::int64_t transfer(std::size_t rank, Track track, const char* name, engine::SimTime start, engine::SimTime end,
                        double bytes, std::int32_t microbatch, std::int32_t chunk, bool backward);
  void optimizer(std::size_t rank, engine::SimTime start, engine::SimTime end);
  /// A dependency arrow between two recorded events (a pipeline send and the receiver's first op).
  void arrow(std::int64_t from_event, std::int64_t to_event);
  /// Names process i after the run: its global rank (the trace's pid) and a label.
  void name_process(std::size_t i, std::int64_t global_rank, std::string name);

 private:
  std::uint32_t name_id(const char* name, program::OpPhase phase);
  std::int64_t push(TimelineEvent e);

  Timeline& t_;
  std::map<std::pair<const void*, int>, std::uint32_t> names_;  ///< interned (static text, phase)
  std::uint32_t category_[6] = {};
  std::uint32_t host_idle_category_ = 0;  ///< the compute stream waiting for the host: not kernels
  std::uint32_t offload_category_ = 0;    ///< the compute stream waiting for an offload copy
  std::uint32_t host_category_ = 0;       ///< the host's own work (not a breakdown category: it overlaps the GPU)
  std::uint32_t optimizer_name_ = 0, p2p_flow_name_ = 0;
};

}  // namespace moesim::sim
