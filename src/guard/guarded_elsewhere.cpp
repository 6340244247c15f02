#include "dvfslab/guarded_elsewhere.hpp"

namespace dvfslab {

bool guarded_here(const Gpu& gpu) {
  return gpu.persists_settings() && dynamic_cast<const GuardedElsewhere*>(&gpu) == nullptr;
}

}  // namespace dvfslab
