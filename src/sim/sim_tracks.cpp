#include "sim/sim_tracks.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "record/breakdown_category.hpp"

namespace moesim::sim {
namespace {
Track track_of(program::OpKind k) {
  switch (k) {
    case program::OpKind::kCompute: return Track::kCompute;
    case program::OpKind::kTpComm: return Track::kTp;
    case program::OpKind::kCpComm: return Track::kCp;
    case program::OpKind::kEpComm: return Track::kEp;
    case program::OpKind::kHostIdle: return Track::kCompute;  // the stream that waits
    case program::OpKind::kOffloadComm: return Track::kCompute;
  }
  return Track::kCompute;
}
}  // namespace

TrackRecorder::TrackRecorder(Timeline& timeline, std::size_t ranks) : t_(timeline) {
  static constexpr const char* kTracks[] = {"compute", "tp comm", "cp comm", "ep comm", "pp comm", "dp comm", "host"};
  // Each track's events are categorised by the breakdown category their time is accounted in.
  using C = BreakdownCategory;
  static constexpr C kCategories[] = {C::kCompute, C::kTpComm, C::kCpComm, C::kEpComm, C::kPpComm, C::kDpComm};
  for (int i = 0; i < 6; ++i) category_[i] = t_.intern(std::string(to_string(kCategories[i])));
  host_idle_category_ = t_.intern(std::string(to_string(C::kHostIdle)));
  offload_category_ = t_.intern(std::string(to_string(C::kOffloadComm)));
  host_category_ = t_.intern("host");
  optimizer_name_ = t_.intern("optimizer_step");
  p2p_flow_name_ = t_.intern("activation");
  t_.processes.resize(ranks);
  for (auto& p : t_.processes) p.tracks.assign(std::begin(kTracks), std::end(kTracks));
}

std::uint32_t TrackRecorder::name_id(const char* name, program::OpPhase phase) {
  const auto key = std::make_pair(static_cast<const void*>(name), static_cast<int>(phase));
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  std::string text = name;
  if (phase != program::OpPhase::kForward) text += fmt::format(" ({})", program::to_string(phase));
  return names_.emplace(key, t_.intern(text)).first->second;
}

std::int64_t TrackRecorder::push(TimelineEvent e) {
  t_.events.push_back(e);
  return static_cast<std::int64_t>(t_.events.size() - 1);
}

std::int64_t TrackRecorder::layer_op(std::size_t rank, const program::LayerOp& op, engine::SimTime start,
                                     engine::SimTime end, const schedule::PipelinePass& pass) {
  const Track track = track_of(op.kind);
  TimelineEvent e;
  e.process = static_cast<std::int32_t>(rank);
  e.track = static_cast<std::int32_t>(track);
  e.name = name_id(op.name, op.phase);
  e.category = op.kind == program::OpKind::kHostIdle      ? host_idle_category_
               : op.kind == program::OpKind::kOffloadComm ? offload_category_
                                                           : category_[static_cast<int>(track)];
  e.start_ps = start;
  e.duration_ps = end - start;
  e.bytes = op.bytes;
  e.flops = op.flops;
  e.microbatch = pass.microbatch;
  e.chunk = pass.chunk;
  e.backward = pass.backward;
  return push(e);
}

std::int64_t TrackRecorder::host_op(std::size_t rank, const program::LayerOp& op, engine::SimTime start,
                                    engine::SimTime end, const schedule::PipelinePass& pass) {
  TimelineEvent e;
  e.process = static_cast<std::int32_t>(rank);
  e.track = static_cast<std::int32_t>(Track::kHost);
  e.name = name_id(op.name, op.phase);
  e.category = host_category_;
  e.start_ps = start;
  e.duration_ps = end - start;
  e.microbatch = pass.microbatch;
  e.chunk = pass.chunk;
  e.backward = pass.backward;
  return push(e);
}

std::int64_t TrackRecorder::transfer(std::size_t rank, Track track, const char* name, engine::SimTime start,
                                     engine::SimTime end, double bytes, std::int32_t microbatch, std::int32_t chunk,
                                     bool backward) {
  TimelineEvent e;
  e.process = static_cast<std::int32_t>(rank);
  e.track = static_cast<std::int32_t>(track);
  e.name = name_id(name, program::OpPhase::kForward);
  e.category = category_[static_cast<int>(track)];
  e.start_ps = start;
  e.duration_ps = end - start;
  e.bytes = bytes;
  e.microbatch = microbatch;
  e.chunk = chunk;
  e.backward = backward;
  return push(e);
}

void TrackRecorder::optimizer(std::size_t rank, engine::SimTime start, engine::SimTime end) {
  TimelineEvent e;
  e.process = static_cast<std::int32_t>(rank);
  e.track = static_cast<std::int32_t>(Track::kCompute);
  e.name = optimizer_name_;
  e.category = category_[0];
  e.start_ps = start;
  e.duration_ps = end - start;
  push(e);
}

void TrackRecorder::arrow(std::int64_t from_event, std::int64_t to_event) {
  if (from_event < 0 || to_event < 0) return;
  t_.flows.push_back({from_event, to_event, p2p_flow_name_});
}

void TrackRecorder::name_process(std::size_t i, std::int64_t global_rank, std::string name) {
  t_.processes.at(i).rank = global_rank;
  t_.processes.at(i).name = std::move(name);
}

}  // namespace moesim::sim
