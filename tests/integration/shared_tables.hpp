// The published sweep tables of data/published/, by file name, for the integration tests.
#pragma once

#include <string>

namespace dvfslab::testing {

inline std::string shared_table(const std::string& name) {
  return std::string(DVFSLAB_SHARED_DATA_DIR) + "/" + name;
}

}  // namespace dvfslab::testing
