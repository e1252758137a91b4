// The HTML report parses (Debian's Python html.parser, with a check that every tag closes)
// and holds, per variant, one summary column, one occupancy section, one cell per CPU and one
// row per pod; it fetches nothing.
#include "lib/simulate/report.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/support/require_component.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/admission/admission_test_util.h"

namespace topologyd::simulate {
namespace {

using namespace ::topologyd::admission::testing;  // NOLINT

constexpr char kPython[] = "/usr/bin/python3";

// Counts <th class="variant">, <section class="variant">, <span class="cpu ..."> and
// <tr class="pod">; fails on a tag closed out of order or left open (void elements aside).
constexpr char kChecker[] = R"(
import sys
from html.parser import HTMLParser
VOID = {"meta", "br", "hr", "img", "input", "link"}
class Check(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.columns, self.sections, self.cpus, self.pods = [], 0, 0, 0, 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "th" and cls == ["variant"]: self.columns += 1
        if tag == "section" and cls == ["variant"]: self.sections += 1
        if tag == "span" and cls[:1] == ["cpu"]: self.cpus += 1
        if tag == "tr" and cls == ["pod"]: self.pods += 1
        if tag not in VOID: self.stack.append(tag)
    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag: sys.exit("unbalanced </%s>" % tag)
c = Check()
c.feed(open(sys.argv[1]).read())
c.close()
if c.stack: sys.exit("unclosed: %s" % c.stack)
print(c.columns, c.sections, c.cpus, c.pods)
)";

std::string RunChecker(const std::string& html) {
  const topologyd::testing::TempDir dir("simulate_report");
  const std::string page = dir.Write("report.html", html);
  const std::string script = dir.Write("check.py", kChecker);
  const std::string command = std::string(kPython) + " " + script + " " + page + " 2>&1";
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  return out;
}

Report TwoVariants() {
  config::Config base = BaseConfig("best-effort", "0-1");
  base.devices.clear();
  const topology::Topology machine = Machine(MachineSpec{});
  std::vector<pod::Pod> pods;
  for (int i = 0; i < 4; ++i) {
    pods.push_back(Pod("p" + std::to_string(i), {Ctr("app", {{"cpu", "5"}, {"memory", "1Gi"}})}));
  }
  absl::StatusOr<std::vector<Arrival>> arrivals = BuildArrivals(pods, {});
  EXPECT_TRUE(arrivals.ok());
  Report report;
  report.machine = "a <test> machine";
  report.numa_nodes = 2;
  report.cpus = 16;
  report.arrivals = arrivals->size();
  for (const std::string policy : {"best-effort", "single-numa-node"}) {
    config::Config c = base;
    c.topology_manager_policy = policy;
    auto node = std::make_shared<const admission::NodePolicy>(Node(c, machine));
    absl::StatusOr<RunResult> run = Simulate(node, *arrivals);
    EXPECT_TRUE(run.ok());
    report.variants.push_back({"policy=" + policy, *std::move(run)});
  }
  return report;
}

TEST(ReportTest, HtmlParsesWithAColumnASectionCpusAndPodsPerVariant) {
  if (access(kPython, X_OK) != 0) SKIP_OR_FAIL() << kPython << " is not installed";
  const Report report = TwoVariants();
  const std::string html = ReportHtml(report);
  // 2 variants x (16 CPUs, 4 pods).
  EXPECT_EQ(RunChecker(html), "2 2 32 8\n");
  // Self-contained: nothing to fetch.
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_NE(html.find("a &lt;test&gt; machine"), std::string::npos);
  EXPECT_NE(html.find("TopologyAffinityError"), std::string::npos);
}

TEST(ReportTest, SummaryHasOneColumnPerVariantAndARowPerReason) {
  const Report report = TwoVariants();
  const SummaryTable t = Summary(report);
  ASSERT_EQ(t.header.size(), 3u);
  EXPECT_EQ(t.header[1], "policy=best-effort");
  bool reason_row = false;
  for (const auto& row : t.rows) {
    ASSERT_EQ(row.size(), 3u);
    if (row[0] == "  TopologyAffinityError") {
      reason_row = true;
      // best-effort admits 5 + 5 + spread 4; single-numa-node refuses the third and fourth.
      EXPECT_EQ(row[2], "2");
    }
  }
  EXPECT_TRUE(reason_row);
  const nlohmann::json doc = ReportJson(report);
  ASSERT_EQ(doc["variants"].size(), 2u);
  EXPECT_EQ(doc["variants"][1]["rejections"]["TopologyAffinityError"], 2);
}

TEST(ReportTest, WarnsOfEveryAdmissionKubeletWouldTakeOverTheLimitToDecide) {
  Report report = TwoVariants();
  // The combinations of the first best-effort admission, costed so that it takes just over 1 s.
  const double combinations = report.variants[0].run.decisions[0].combinations;
  ASSERT_GT(combinations, 1);
  report.options.ns_per_combination = 1e9 / combinations * 1.01;
  int expected = 0;
  for (const VariantResult& v : report.variants) {
    for (const Decision& d : v.run.decisions) expected += d.combinations >= combinations ? 1 : 0;
  }
  const std::vector<std::string> warnings = SlowAdmissionWarnings(report);
  EXPECT_EQ(static_cast<int>(warnings.size()), expected);
  ASSERT_FALSE(warnings.empty());
  EXPECT_THAT(warnings[0], ::testing::StartsWith("policy=best-effort: pod default/pod-p0: "
                                                 "kubelet's merge would enumerate"));
  EXPECT_THAT(warnings[0], ::testing::HasSubstr("(about 1.01 s); topologyd admitted it"));

  report.options.ns_per_combination = 1e9 / combinations * 0.99;  // just under: no warning for it
  for (const std::string& w : SlowAdmissionWarnings(report)) {
    EXPECT_THAT(w, ::testing::Not(::testing::HasSubstr("pod-p0:")));
  }
}

TEST(ReportTest, BytesForPeople) {
  EXPECT_EQ(Bytes(0), "0 B");
  EXPECT_EQ(Bytes(512 * kMi), "512 MiB");
  EXPECT_EQ(Bytes(3 * kGi / 2), "1.5 GiB");
}

}  // namespace
}  // namespace topologyd::simulate
