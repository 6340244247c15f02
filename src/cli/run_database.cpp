#include "cli/run_database.hpp"

namespace dvfslab::cli {

RunDatabase::RunDatabase(const std::filesystem::path& path)
    : path_(path), existed_(std::filesystem::exists(path)), store_(std::in_place, path) {}

void RunDatabase::remove_if_unused() {
  if (existed_ || !store_->runs().empty()) return;
  store_.reset();
  for (const auto& file : database_files(path_)) std::filesystem::remove(file);
}

}  // namespace dvfslab::cli
