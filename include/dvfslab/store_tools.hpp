#pragma once
// The store's whole-database operations: importing a sweep table, merging shard
// databases, and exporting a database through a registry of writers (CSV, JSON,
// a sweep table, and any a host adds).
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/store.hpp"
#include "dvfslab/writer_registry.hpp"

namespace dvfslab {

// Loads a sweep table (see sweep_table.hpp) into `store`: one run of kind import per
// (source, gpu) of the file. Refuses a file already imported into this store.
struct ImportSummary {
  std::vector<std::int64_t> run_ids;  // the new runs, in the order their GPUs appear
  std::size_t rows = 0;
};
ImportSummary import_sweep_table(Store& store, const std::filesystem::path& csv_path);
// The same in two steps, so a caller can check the file before it creates a
// database, without reading it twice.
struct SweepTableFile {
  std::filesystem::path path;
  std::string hash;  // plan_hash() of the content: what recognises the file again
  std::vector<ResultRow> rows;
};
SweepTableFile read_sweep_table_file(const std::filesystem::path& csv_path);  // throws ConfigError
ImportSummary import_sweep_table(Store& store, const SweepTableFile& table);

// Merges shard databases into a new database `output` (which must not exist).
// Refuses inputs of different plans (plan hash) and points recorded twice.
void merge_stores(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs);

// The export formats, each a writer of every measurement of a store: csv (one row
// per measurement, every field), json ({"schema_version", "runs", "measurements"})
// and sweep-table (the published sweep-table layout, one row per plan point), then
// any a host added with store_writers().add().
using StoreWriter = WriterRegistry<Store&>::Writer;
WriterRegistry<Store&>& store_writers();

// Writes `store` in the format of that name; throws ConfigError listing the choices
// for an unknown one.
void export_store(Store& store, std::string_view format, std::ostream& out);

}  // namespace dvfslab
