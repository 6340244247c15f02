#pragma once
// A GPU whose lock and restore journal another process keeps: the dvfslab daemon,
// for a GPU controlled through it (docs/daemon.md). The guard takes neither for
// such a GPU; its changes are restored by that process when this one ends.
#include "dvfslab/gpu.hpp"

namespace dvfslab {

// Mixed into such a GPU's class beside Gpu.
class GuardedElsewhere {
 public:
  virtual ~GuardedElsewhere() = default;
};

// Whether this process takes the lock and writes the journal of `gpu`'s changes: a
// GPU whose settings persist, unless another process guards it.
bool guarded_here(const Gpu& gpu);

}  // namespace dvfslab
