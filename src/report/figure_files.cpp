// `dvfslab report --figures DIR`: every figure of the report as its own SVG and PDF
// file, for a paper. Node draws the SVGs with the Vega runtime the page embeds;
// rsvg-convert (librsvg, through cairo) turns each into a PDF with its fonts embedded.
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/report.hpp"
#include "report/external_tool.hpp"
#include "report/figure_render_script.hpp"
#include "report/figure_spec_script.hpp"
#include "report/page_data.hpp"
#include "report/scripts.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kProgressEvery = 20;
constexpr std::size_t kSlugLength = 80;

struct Tool {
  const char* program;
  const char* debian_package;
};
constexpr Tool kNode{"node", "nodejs"};
constexpr Tool kRsvgConvert{"rsvg-convert", "librsvg2-bin"};

void require_tool(const Tool& tool) {
  if (report_detail::program_on_path(tool.program)) return;
  throw NotSupportedError(
      fmt::format("report --figures needs `{}`, which is not on PATH: install the Debian package {} "
                  "(scripts/install-deps.sh does)",
                  tool.program, tool.debian_package));
}

// "SIMULATED — mean power vs core clock (MHz)" + "NVIDIA H200 · resnet50" →
// "simulated-mean-power-vs-core-clock-mhz-nvidia-h200-resnet50": ASCII letters and
// digits, everything else one dash.
std::string slug_of(const json& title) {
  std::string text = title.is_object() ? title.value("text", "") + " " + title.value("subtitle", "")
                                       : title.get<std::string>();
  std::string slug;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80 && std::isalnum(byte)) {
      slug += static_cast<char>(std::tolower(byte));
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  if (slug.size() > kSlugLength) slug.resize(kSlugLength);
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "figure" : slug;
}

void write_text(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
}

// The folder the figures go into, and the temporary folder inside it where they are
// made: removed whatever happens, and with it the folder itself when this made it
// and nothing was moved in.
class FigureFolder {
 public:
  explicit FigureFolder(const fs::path& dir) : dir_(dir) {
    if (dir.empty()) throw ConfigError("--figures: the folder name is empty");
    std::error_code error;
    if (fs::exists(dir, error) && !fs::is_directory(dir, error))
      throw ConfigError(fmt::format("{}: not a folder (--figures names the folder to write the figures into)",
                                    dir.string()));
    created_ = !fs::exists(dir, error);
    fs::create_directories(dir, error);
    if (error)
      throw ConfigError(fmt::format("{}: cannot create the folder: {}", dir.string(), error.message()));
    std::string pattern = (dir / ".dvfslab-figures-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      const std::string reason = std::strerror(errno);
      remove_if_created();
      throw ConfigError(fmt::format("{}: cannot write into the folder: {}", dir.string(), reason));
    }
    staging_ = pattern;
  }
  ~FigureFolder() {
    // Entry by entry, not fs::remove_all: the libtorch.so of PyTorch's CUDA wheel
    // exports its own remove_all, which a dvfslab built against it binds to, and
    // that one crashed (docs/workloads.md, "Tests on a GPU machine"). Pre-order
    // listed, so removed in reverse: a folder's files before the folder.
    std::error_code listing, ignored;
    std::vector<fs::path> entries;
    for (fs::recursive_directory_iterator entry(staging_, listing), end; !listing && entry != end;
         entry.increment(listing))
      entries.push_back(entry->path());
    for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry) fs::remove(*entry, ignored);
    fs::remove(staging_, ignored);
    if (!committed_) remove_if_created();
  }
  FigureFolder(const FigureFolder&) = delete;
  FigureFolder& operator=(const FigureFolder&) = delete;

  const fs::path& staging() const { return staging_; }

  // Moves every file made into the folder.
  std::vector<fs::path> commit(const std::vector<std::string>& names) {
    std::vector<fs::path> written;
    for (const std::string& name : names) {
      std::error_code error;
      fs::rename(staging_ / name, dir_ / name, error);
      if (error)
        throw Error(fmt::format("{}: cannot move {} into place ({} of {} written): {}", dir_.string(), name,
                                written.size(), names.size(), error.message()));
      written.push_back(dir_ / name);
    }
    committed_ = true;
    return written;
  }

 private:
  void remove_if_created() {
    std::error_code ignored;
    if (created_) fs::remove(dir_, ignored);  // only when empty
  }

  fs::path dir_;
  fs::path staging_;
  bool created_ = false;
  bool committed_ = false;
};

}  // namespace

std::vector<fs::path> write_figure_files(const Analysis& analysis, const fs::path& dir,
                                         const HtmlReportOptions& options,
                                         const std::function<void(const std::string&)>& progress) {
  const auto scripts = report_detail::required_report_scripts();
  FigureFolder folder(dir);
  require_tool(kNode);
  require_tool(kRsvgConvert);

  auto groups = report_detail::report_figure_groups(analysis, options);
  // Numbered in the page's order: the summary figure first.
  std::stable_partition(groups.begin(), groups.end(),
                        [](const report_detail::FigureGroup& group) { return group.kind == "summary"; });
  json templates = json::array();
  json figures = report_detail::figures_json(groups, templates);
  const std::size_t digits = std::max<std::size_t>(2, std::to_string(figures.size()).size());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    figures[i]["file"] = fmt::format("{:0{}}-{}", i + 1, digits, slug_of(figures[i]["title"]));
  }

  const fs::path work = folder.staging() / "work";
  fs::create_directory(work);
  for (const auto& script : scripts) {
    if (script.name == "vega.min.js" || script.name == "vega-lite.min.js")
      write_text(work / script.name, script.text);
  }
  write_text(work / "figure_spec.js", report_detail::figure_spec_script());
  write_text(work / "render.js", report_detail::figure_render_script());
  const json data = {{"figures", figures},
                     {"templates", std::move(templates)},
                     {"groups", report_detail::groups_json(groups)}};
  write_text(work / "data.json", data.dump());

  const auto drawn = report_detail::run_tool(
      {kNode.program, (work / "render.js").string(), work.string(), folder.staging().string()},
      work / "node.log", static_cast<bool>(progress));
  if (drawn.code != 0)
    throw Error(
        fmt::format("drawing the figures with node failed (exit code {}): {}", drawn.code, drawn.message));

  for (std::size_t i = 0; i < figures.size(); ++i) {
    const std::string file = figures[i]["file"];
    const fs::path svg = folder.staging() / (file + ".svg"), pdf = folder.staging() / (file + ".pdf");
    // At 72 dpi one SVG pixel is one PDF point: the sizes docs/report.md gives.
    const auto converted = report_detail::run_tool({kRsvgConvert.program, "--format=pdf", "--dpi-x=72",
                                                    "--dpi-y=72", "--output", pdf.string(), svg.string()},
                                                   work / "rsvg-convert.log", false);
    if (converted.code != 0)
      throw Error(fmt::format("converting {}.svg to PDF with rsvg-convert failed (exit code {}): {}", file,
                              converted.code, converted.message));
    names.push_back(file + ".svg");
    names.push_back(file + ".pdf");
    if (progress && figures.size() >= kProgressEvery &&
        ((i + 1) % kProgressEvery == 0 || i + 1 == figures.size()))
      progress(fmt::format("converted {} of {} figures to PDF", i + 1, figures.size()));
  }
  return folder.commit(names);
}

}  // namespace dvfslab
