#include "dvfslab/error.hpp"
#include "report/scripts.hpp"

namespace dvfslab::report_detail {

std::vector<EmbeddedScript> required_report_scripts() {
  auto scripts = embedded_report_scripts();
  if (scripts.empty()) {
    throw NotSupportedError(
        "this dvfslab was built without the report's JavaScript runtimes (web/node_modules was missing): run "
        "`npm ci` in web/ (scripts/install-deps.sh does it), configure and build again");
  }
  return scripts;
}

}  // namespace dvfslab::report_detail
