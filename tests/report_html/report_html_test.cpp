// The HTML reports in a real browser (issue 8): the three example scenarios' result pages and one
// plan page are written by `moesim`, rendered by headless Chromium, and must draw with zero script
// errors, every section present and every chart container holding a drawn SVG or canvas. PNG
// screenshots land in build/report-html/ (a CI artifact; look at them). Without Chromium the test
// says so and skips, as the GPU tests do without a GPU.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "html_checks.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const auto r = test::run_command(std::string("command -v ") + name, test::source_dir().string());
    if (r.exit_code == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return {};
}

struct Page {
  std::string name, command;
  std::vector<std::string> sections;
};

const std::vector<std::string> kResultSections{"summary", "breakdown", "memory", "timeline", "expert-load", "topology", "assumptions", "inputs"};
const std::vector<std::string> kPlanSections{"summary", "ranked", "breakdown", "memory", "rejected", "precision", "skew",
                                             "pareto", "expert-load", "topology", "assumptions", "inputs"};
const std::vector<std::string> kValidationSections{"summary", "phases", "proxy", "inputs"};
const std::vector<std::string> kComparisonSections{"summary", "breakdown", "memory", "differences", "inputs"};

}  // namespace

TEST_CASE("example reports render in headless Chromium with every section and chart drawn") {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    MESSAGE("skipped: chromium not found (Debian package `chromium`; .ci/setup installs it)");
    return;
  }
  const fs::path out = test::binary_dir() / "report-html";
  fs::create_directories(out);
  const std::string moesim = test::moesim_binary();
  std::vector<Page> pages;
  for (const char* s : {"mixtral-8x7b-h100-64", "esm2-15b-moe-h200", "custom-moe-lognormal-gb200"}) {
    const std::string html = (out / (std::string(s) + ".html")).string();
    pages.push_back({s, moesim + " simulate " + s + " -q --html '" + html + "' --trace '" + (out / (std::string(s) + ".trace.json")).string() + "'",
                     kResultSections});
  }
  pages.push_back({"plan-mixtral-8x7b-h100-64",
                   moesim + " plan plan-mixtral-8x7b-h100-64 --no-skew -q --html '" + (out / "plan-mixtral-8x7b-h100-64.html").string() + "'",
                   kPlanSections});
  // A result page made from JSON by `moesim report` (no timeline: the section says so instead).
  const std::string json = (out / "esm2-from-json.json").string();
  pages.push_back({"esm2-from-json",
                   moesim + " simulate esm2-15b-moe-h200 -q --json '" + json + "' && " + moesim + " report '" + json + "' -o '" +
                       (out / "esm2-from-json.html").string() + "'",
                   kResultSections});

  // A what-if result (the prediction as asked beside it), and two results side by side (`moesim report A B`).
  pages.push_back({"whatif-mixtral",
                   moesim + " simulate docs/scenarios/mixtral-whatif-expert-mlp-2x.json -q --html '" +
                       (out / "whatif-mixtral.html").string() + "'",
                   kResultSections});
  pages.push_back({"comparison",
                   moesim + " simulate mixtral-8x7b-h100-64 --fidelity estimate -q --json '" + (out / "mixtral-estimate.json").string() +
                       "' && " + moesim + " report '" + (out / "mixtral-estimate.json").string() + "' '" + json + "' -o '" +
                       (out / "comparison.html").string() + "'",
                   kComparisonSections});

  // A validation page: the synthetic example run against the Mixtral proxy (docs/validation.md).
  pages.push_back({"validation-mixtral",
                   moesim + " validate mixtral-8x7b-h100-64 --gpus 8 --layers 2 --measured "
                            "tests/data/validation-measured-example.json --html '" +
                       (out / "validation-mixtral.html").string() + "'",
                   kValidationSections});

  for (const auto& page : pages) {
    CAPTURE(page.name);
    const auto made = test::run_command(page.command, test::source_dir().string());
    REQUIRE_MESSAGE(made.exit_code == 0, made.err);
    const fs::path html = out / (page.name + ".html");
    const std::string text = test::slurp(html.string());
    REQUIRE(!text.empty());
    // Self-contained: nothing is loaded from the network (links in text would be fine; there are none).
    CHECK_MESSAGE(test::remote_resources(text).empty(), test::remote_resources(text));
    CHECK(text.find("http://") == std::string::npos);
    CHECK(text.find("https://") == std::string::npos);

    const std::string flags = " --headless --disable-gpu --no-sandbox --hide-scrollbars --user-data-dir='" +
                              (out / "chromium-profile").string() + "' --enable-logging=stderr --v=0 --window-size=1280,900 ";
    const auto dom = test::run_command("'" + chromium + "'" + flags + "--dump-dom 'file://" + html.string() + "'", out.string());
    REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
    const auto problems = test::check_report_dom(dom.out, page.sections);
    CHECK_MESSAGE(problems.empty(), problems);
    // Console errors that the page's own recorder could miss (a script that fails to parse).
    for (const char* bad : {"Uncaught", "SyntaxError", "ReferenceError", "TypeError"}) {
      CHECK_MESSAGE(dom.err.find(bad) == std::string::npos, bad << " in the browser log:\n" << dom.err);
    }
    const fs::path png = out / (page.name + ".png");
    fs::remove(png);
    const auto shot = test::run_command("'" + chromium + "'" + flags.substr(0, flags.find("--window-size")) +
                                            "--window-size=1280,6000 --screenshot='" + png.string() + "' 'file://" + html.string() + "'",
                                        out.string());
    CHECK_MESSAGE(shot.exit_code == 0, shot.err);
    CHECK(fs::exists(png));
    if (fs::exists(png)) CHECK(fs::file_size(png) > 20000);
  }
  MESSAGE("screenshots in " << out.string());
}
