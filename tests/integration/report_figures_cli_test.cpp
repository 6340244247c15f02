// `dvfslab report --figures DIR` and `--style paper`: one SVG and one PDF per figure,
// the PDF's fonts embedded, through the real binary, node, rsvg-convert and poppler.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "file_text.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::run_dvfslab;
using testing::run_process;

// Where `program` is on PATH, or "" when it is not.
std::string find_program(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream directories(path ? path : "");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    const fs::path candidate = fs::path(directory.empty() ? "." : directory) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

#define SKIP_WITHOUT(program)        \
  if (find_program(program).empty()) \
  GTEST_SKIP() << program << " is not on PATH (scripts/install-deps.sh --tests installs it)"

// A sweep table of one kernel at four core clocks, the default at 1380 MHz: four
// charts of its own (power, throughput, energy, Pareto), one relative to its
// default, the GPU's Pareto figure relative to the defaults, and the summary.
constexpr std::size_t kFigures = 7;
fs::path write_table(const testing::ScratchDir& scratch) {
  const fs::path table = scratch / "sweep.csv";
  std::ofstream out(table);
  out << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
         "test,Tesla V100 PCIe,kernel,900,877,,0.00130,120.0,0\n"
         "test,Tesla V100 PCIe,kernel,1087,877,,0.00105,140.0,0\n"
         "test,Tesla V100 PCIe,kernel,1237,877,,0.00094,170.0,0\n"
         "test,Tesla V100 PCIe,kernel,1380,877,,0.00088,205.0,1\n";
  return table;
}

std::vector<fs::path> files_with(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == extension) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The root element's width attribute of an SVG Vega wrote.
int svg_width(const std::string& svg) {
  std::smatch match;
  EXPECT_TRUE(std::regex_search(svg, match, std::regex("<svg[^>]* width=\"([0-9]+)\"")));
  return match.empty() ? 0 : std::stoi(match[1]);
}

// Every font-size="Npx" in an SVG.
std::vector<int> font_sizes(const std::string& svg) {
  std::vector<int> sizes;
  const std::regex size("font-size=\"([0-9]+)px\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), size); it != std::sregex_iterator(); ++it)
    sizes.push_back(std::stoi((*it)[1]));
  return sizes;
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// One line on stderr, a documented code, no "internal error".
void expect_one_clear_error(const ProcessResult& result, int code, const std::string& says) {
  EXPECT_EQ(result.exit_code, code) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_TRUE(result.err.starts_with("dvfslab: error: ")) << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(says), std::string::npos) << result.err;
}

TEST(ReportFiguresCli, OneSvgAndOnePdfPerFigureWithEveryFontEmbedded) {
  SKIP_WITHOUT("node");
  SKIP_WITHOUT("rsvg-convert");
  SKIP_WITHOUT("pdffonts");
  testing::ScratchDir scratch;
  const fs::path dir = scratch / "figures";
  const auto result = run_dvfslab({"report", write_table(scratch).string(), "--figures", dir.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("wrote 7 figures into"), std::string::npos) << result.err;

  const auto svgs = files_with(dir, ".svg"), pdfs = files_with(dir, ".pdf");
  ASSERT_EQ(svgs.size(), kFigures);
  ASSERT_EQ(pdfs.size(), kFigures);
  // Nothing else: no temporary folder left behind, no page without -o.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2 * kFigures);
  // Numbered in the page's order, the summary first, and named by their titles.
  EXPECT_TRUE(svgs.front().filename().string().starts_with("01-energy-saving-and-slowdown-of-the-optimum"))
      << svgs.front();
  EXPECT_EQ(svgs[1].filename(), "02-mean-power-vs-core-clock-mhz-tesla-v100-pcie-kernel.svg");
  for (std::size_t i = 0; i < kFigures; ++i) {
    EXPECT_EQ(svgs[i].stem(), pdfs[i].stem());
    const std::string svg = testing::file_text(svgs[i]);
    EXPECT_TRUE(svg.starts_with("<svg")) << svgs[i];
    EXPECT_TRUE(svg.ends_with("</svg>")) << svgs[i];
    // Every group that is opened is closed (those written <g .../> need no closing).
    const std::regex opening("<g(\\s[^>]*[^/])?>");
    EXPECT_EQ(std::distance(std::sregex_iterator(svg.begin(), svg.end(), opening), std::sregex_iterator()),
              static_cast<std::ptrdiff_t>(count_of(svg, "</g>")))
        << svgs[i];
    EXPECT_GT(count_of(svg, "class=\"mark-"), 5u) << svgs[i];
    EXPECT_NE(svg.find("<path"), std::string::npos) << svgs[i];

    const auto fonts = run_process(find_program("pdffonts"), {pdfs[i].string()});
    ASSERT_EQ(fonts.exit_code, 0) << fonts.err;
    std::istringstream lines(fonts.out);
    std::string header, rule, line;
    std::getline(lines, header);
    std::getline(lines, rule);
    const auto emb = header.find("emb");
    ASSERT_NE(emb, std::string::npos) << fonts.out;
    int listed = 0;
    while (std::getline(lines, line)) {
      ++listed;
      EXPECT_EQ(line.substr(emb, 3), "yes") << pdfs[i] << ": " << line;
    }
    EXPECT_GE(listed, 1) << pdfs[i] << " lists no font: " << fonts.out;
  }
  // At 72 dpi the PDF page is the SVG's size in points.
  if (const std::string pdfinfo = find_program("pdfinfo"); !pdfinfo.empty()) {
    const auto info = run_process(pdfinfo, {pdfs[1].string()});
    EXPECT_NE(
        info.out.find("Page size:       " + std::to_string(svg_width(testing::file_text(svgs[1]))) + " x "),
        std::string::npos)
        << info.out;
  }
}

TEST(ReportFiguresCli, PaperStyleMakesSmallerFiguresWithSmallerText) {
  SKIP_WITHOUT("node");
  SKIP_WITHOUT("rsvg-convert");
  testing::ScratchDir scratch;
  const fs::path table = write_table(scratch);
  const fs::path screen = scratch / "screen", paper = scratch / "paper";
  const auto screen_result = run_dvfslab({"report", table.string(), "--figures", screen.string()});
  ASSERT_EQ(screen_result.exit_code, 0) << screen_result.err;
  const auto paper_result = run_dvfslab({"report", table.string(), "--figures", paper.string(), "--style",
                                         "paper", "-o", (scratch / "paper.html").string()});
  ASSERT_EQ(paper_result.exit_code, 0) << paper_result.err;

  const std::string energy = "04-energy-per-unit-of-work-vs-core-clock-mhz-tesla-v100-pcie-kernel.svg";
  const std::string screen_svg = testing::file_text(screen / energy),
                    paper_svg = testing::file_text(paper / energy);
  ASSERT_FALSE(screen_svg.empty());
  ASSERT_FALSE(paper_svg.empty());
  EXPECT_LT(svg_width(paper_svg), svg_width(screen_svg));
  EXPECT_LE(svg_width(paper_svg), 260);  // one column of a two-column paper: 3.3 in = 238 pt
  const auto screen_sizes = font_sizes(screen_svg), paper_sizes = font_sizes(paper_svg);
  ASSERT_FALSE(paper_sizes.empty());
  EXPECT_LE(*std::max_element(paper_sizes.begin(), paper_sizes.end()), 9);
  EXPECT_GT(*std::max_element(screen_sizes.begin(), screen_sizes.end()), 9);
  EXPECT_NE(paper_svg.find("font-family=\"DejaVu Sans\""), std::string::npos);
  // The page written beside them carries the same style.
  EXPECT_NE(testing::file_text(scratch / "paper.html").find("\"font\":\"DejaVu Sans\""), std::string::npos);
}

TEST(ReportFiguresCli, FolderThatIsAFileUnwritableOrEmptyIsOneConfigError) {
  testing::ScratchDir scratch;
  const std::string table = write_table(scratch).string();
  const fs::path file = scratch / "not-a-folder";
  std::ofstream(file) << "keep me";
  expect_one_clear_error(run_dvfslab({"report", table, "--figures", file.string()}), 3, "not a folder");
  EXPECT_EQ(testing::file_text(file), "keep me");
  expect_one_clear_error(run_dvfslab({"report", table, "--figures", "/proc/self"}), 3,
                         "cannot write into the folder");
  expect_one_clear_error(run_dvfslab({"report", table, "--figures", "/proc/dvfslab-figures"}), 3,
                         "cannot create the folder");
  expect_one_clear_error(run_dvfslab({"report", table, "--figures", ""}), 3, "the folder name is empty");
  expect_one_clear_error(run_dvfslab({"report", table, "--figures", "x", "--style", "poster"}), 2, "poster");
}

TEST(ReportFiguresCli, MissingToolIsOneLineNamingItsPackage) {
  testing::ScratchDir scratch;
  const std::string table = write_table(scratch).string();
  fs::create_directory(scratch / "empty-path");
  const fs::path dir = scratch / "figures";
  expect_one_clear_error(run_dvfslab({"report", table, "--figures", dir.string()},
                                     {{"PATH", (scratch / "empty-path").string()}}),
                         6, "install the Debian package nodejs");
  EXPECT_FALSE(fs::exists(dir));  // made for the figures, removed with none in it
}

TEST(ReportFiguresCli, FailedConversionLeavesNoFigureBehind) {
  SKIP_WITHOUT("node");
  testing::ScratchDir scratch;
  const std::string table = write_table(scratch).string();
  const fs::path bin = scratch / "bin";
  fs::create_directory(bin);
  fs::create_symlink(find_program("node"), bin / "node");
  std::ofstream(bin / "rsvg-convert") << "#!/bin/sh\necho 'rsvg-convert: out of paper' >&2\nexit 1\n";
  fs::permissions(bin / "rsvg-convert", fs::perms::owner_all);
  const fs::path dir = scratch / "figures";
  fs::create_directory(dir);
  std::ofstream(dir / "notes.txt") << "mine";
  expect_one_clear_error(run_dvfslab({"report", table, "--figures", dir.string()}, {{"PATH", bin.string()}}),
                         1, "rsvg-convert: out of paper");
  // The folder holds what it held: no figure, no temporary folder.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace dvfslab
