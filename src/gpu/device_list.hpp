#pragma once
// A --device spec naming several GPUs ("0,1", "0-3", "sim:h200,sim:h200",
// "GPU-...,GPU-..."): its items, each a spec of one backend, and index ranges
// (docs/multi-gpu.md#choosing-the-gpus).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dvfslab {

// The items of `spec`, in order. A comma always ends an unprefixed item (an
// index, range, UUID, PCI bus id, auto or all); it ends an item of a prefixed
// backend (`prefixes`: "sim:", "twin:", ...) only where a whole spec follows, so
// that a spec with commas of its own (twin:FILE.csv@noise=1%,seed=7) stays one
// item. Throws UsageError for an empty item (",0", "0,,1", "0,").
std::vector<std::string> split_device_list(std::string_view spec, const std::vector<std::string>& prefixes);

// Indices first..last, both included.
struct IndexRange {
  unsigned first = 0;
  unsigned last = 0;
};
// "0-3" as a range; nullopt for text of another shape. Throws UsageError for a
// reversed range ("3-0").
std::optional<IndexRange> parse_index_range(std::string_view text);

}  // namespace dvfslab
