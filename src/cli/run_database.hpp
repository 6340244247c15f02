#pragma once
// The database a measuring command (sweep, search, tune) records its run in.
#include <filesystem>
#include <optional>

#include "dvfslab/store.hpp"

namespace dvfslab::cli {

// Opens the database `path`, creating it when absent. A command refused before it
// recorded a run (GPU busy, clock changes refused) must leave no empty database
// behind, so its failure path is
//   RunDatabase database(args.db);
//   try { run(database.store()); } catch (...) { database.remove_if_unused(); throw; }
class RunDatabase {
 public:
  explicit RunDatabase(const std::filesystem::path& path);

  Store& store() { return *store_; }

  // Closes and removes the database when this created it and it holds no run.
  void remove_if_unused();

 private:
  std::filesystem::path path_;
  bool existed_;
  std::optional<Store> store_;
};

}  // namespace dvfslab::cli
