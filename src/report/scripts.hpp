#pragma once
// The JavaScript runtimes compiled into the binary for the HTML report (generated
// by cmake/EmbedScripts.cmake from web/node_modules).
#include <string>
#include <string_view>
#include <vector>

namespace dvfslab::report_detail {

struct EmbeddedScript {
  std::string_view name;  // "vega.min.js"
  std::string text;
};

// Vega, Vega-Lite and vega-embed in load order; empty when the build had no
// web/node_modules.
std::vector<EmbeddedScript> embedded_report_scripts();
// The same, or a NotSupportedError (exit 6) saying how to get them when the build had none.
std::vector<EmbeddedScript> required_report_scripts();

}  // namespace dvfslab::report_detail
