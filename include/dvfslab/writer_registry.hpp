#pragma once
// A named set of output writers that a host program can extend: what a command's
// `--format` lists, documents and picks. One registry per kind of input, since a
// writer of store rows and a writer of an analysis are given different things
// (docs/architecture.md#output-writers).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dvfslab/error.hpp"

namespace dvfslab {

template <typename Input>
class WriterRegistry {
 public:
  struct Writer {
    std::string name;  // what --format takes
    std::string help;  // a short phrase, shown in parentheses after the name
    std::function<void(Input, std::ostream&)> write;
  };

  // `kind` names the registry in errors: "unknown <kind> format 'x'".
  explicit WriterRegistry(std::string kind) : kind_(std::move(kind)) {}

  // Adds a writer after those already there. Throws ConfigError for an empty name,
  // a missing write function or a name already taken.
  void add(Writer writer) {
    if (writer.name.empty()) throw ConfigError(fmt::format("a {} writer needs a name", kind_));
    if (!writer.write)
      throw ConfigError(fmt::format("{} writer '{}' has no write function", kind_, writer.name));
    if (contains(writer.name)) {
      throw ConfigError(fmt::format("{} format '{}' is registered already", kind_, writer.name));
    }
    writers_.push_back(std::move(writer));
  }

  bool contains(std::string_view name) const {
    return std::any_of(writers_.begin(), writers_.end(), [&](const Writer& w) { return w.name == name; });
  }

  // Throws ConfigError naming the choices when no writer has this name.
  const Writer& find(std::string_view name) const {
    for (const Writer& writer : writers_) {
      if (writer.name == name) return writer;
    }
    throw ConfigError(fmt::format("unknown {} format '{}': choose {}", kind_, name, choices()));
  }

  std::vector<std::string> names() const {
    std::vector<std::string> names;
    for (const Writer& writer : writers_) names.push_back(writer.name);
    return names;
  }
  // "csv, json or sweep-table"
  std::string choices() const {
    return listed([](const Writer& writer) { return writer.name; });
  }
  // "csv (every field), json (runs and measurements) or ..."
  std::string help() const {
    return listed([](const Writer& writer) { return fmt::format("{} ({})", writer.name, writer.help); });
  }

 private:
  template <typename Describe>
  std::string listed(Describe describe) const {
    std::string text;
    for (std::size_t i = 0; i < writers_.size(); ++i) {
      if (i > 0) text += i + 1 == writers_.size() ? " or " : ", ";
      text += describe(writers_[i]);
    }
    return text;
  }

  std::string kind_;
  std::vector<Writer> writers_;  // in the order they were added
};

}  // namespace dvfslab
