// A simulation's report: one column per variant (a node configuration the same workload ran
// under), as a summary table (rows of text cells, for the terminal and HTML alike), a JSON
// document and one self-contained HTML file (no script, stylesheet or font from elsewhere).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

#include "lib/simulate/run.h"

namespace topologyd::simulate {

struct VariantResult {
  std::string name;  // "policy=restricted", "config=dpdk.yaml", or "base"
  RunResult run;
};

struct Report {
  std::string machine;  // where the machine came from, e.g. "hwloc XML file m.xml"
  int numa_nodes = 0;
  int cpus = 0;
  size_t arrivals = 0;
  RunOptions options;
  std::vector<VariantResult> variants;
};

// The summary: a header ("", then the variants' names) and rows (a measure, then one cell per
// variant). One row per rejection reason any variant saw.
struct SummaryTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
SummaryTable Summary(const Report& report);

// One line per admission kubelet would take longer than options.slow_seconds to decide:
// "VARIANT: pod NS/NAME: kubelet's merge would enumerate N combinations (about T s)".
std::vector<std::string> SlowAdmissionWarnings(const Report& report);

// The JSON document (docs/cli.md, `simulate`).
nlohmann::json ReportJson(const Report& report);

// The HTML report: summary table, per-NUMA occupancy bars per variant, rejection reasons with
// one message each, warnings.
std::string ReportHtml(const Report& report);

// "512 MiB", "1.5 GiB", "0 B": bytes for people.
std::string Bytes(uint64_t bytes);

}  // namespace topologyd::simulate
