#include "dvfslab/input_file.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab {

void require_regular_file(const std::filesystem::path& path, std::string_view what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return;
  if (S_ISDIR(info.st_mode)) {
    throw ConfigError(fmt::format("{} '{}' is a directory: give the path of a file", what, path.string()));
  }
  if (!S_ISREG(info.st_mode)) {
    throw ConfigError(
        fmt::format("{} '{}' is not a regular file (a device, pipe or socket): give the path of a file", what,
                    path.string()));
  }
}

}  // namespace dvfslab
