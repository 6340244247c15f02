// RankMerger: the markers of a job's ranks as the one stream the meter and the
// tuner read (docs/multi-gpu.md, "How ranks report").
#include <algorithm>
#include <limits>

#include "dvfslab/markers.hpp"

namespace dvfslab {

bool RankMerger::add(const Marker& marker, std::vector<Marker>& out) {
  Progress& progress = ranks_[marker.rank];
  ranks_announced_ = std::max(ranks_announced_, marker.ranks);
  // Named windows of the other ranks would repeat rank 0's (DDP ranks run the same
  // loop) and could not nest in one stream with them.
  if (marker.kind != Marker::Kind::iterations || from_ == IterationsFrom::rank0) {
    if (marker.rank == 0) out.push_back(marker);
    return true;
  }
  if (marker.iterations > std::numeric_limits<std::int64_t>::max() - progress.iterations) return false;
  progress.iterations += marker.iterations;
  progress.items += marker.items.value_or(0.0);
  const Progress now = slowest();
  if (now.iterations > counted_.iterations) {
    Marker merged;
    merged.iterations = now.iterations - counted_.iterations;
    if (marker.items) merged.items = std::max(0.0, now.items - counted_.items);
    counted_.iterations = now.iterations;
    counted_.items = std::max(counted_.items, now.items);
    out.push_back(std::move(merged));
  } else if (marker.iterations == 0 && marker.rank == 0) {
    out.push_back(marker);  // rank 0's `step 0`: where the loop starts
  }
  return true;
}

RankMerger::Progress RankMerger::slowest() const {
  // A rank the job has but that has not written yet has finished nothing: without
  // this, ranks that start apart would count the first one's lead.
  if (ranks_.size() < static_cast<std::size_t>(ranks_announced_)) return {};
  Progress least{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<double>::infinity()};
  for (const auto& [rank, progress] : ranks_) {
    least.iterations = std::min(least.iterations, progress.iterations);
    least.items = std::min(least.items, progress.items);
  }
  return least;
}

}  // namespace dvfslab
