#include "lib/simulate/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/xml_text/xml_text.h"

namespace topologyd::simulate {
namespace {

std::string Percent(int part, int whole) {
  if (whole == 0) return fmt::format("{}", part);
  return fmt::format("{} ({:.0f}%)", part, 100.0 * part / whole);
}

std::string Count(double n) {
  if (n < 1e6) return fmt::format("{:.0f}", n);
  return fmt::format("{:.3g}", n);
}

std::string Amount(const FreeAmount& f, uint64_t value) {
  return f.resource == "cpu" ? fmt::format("{}", value) : Bytes(value);
}

// Every resource whose free amount some variant reports, in first-seen order.
std::vector<std::string> FreeResources(const Report& report) {
  std::vector<std::string> out;
  for (const VariantResult& v : report.variants) {
    for (const FreeAmount& f : v.run.end.free) {
      if (std::find(out.begin(), out.end(), f.resource) == out.end()) out.push_back(f.resource);
    }
  }
  return out;
}

const FreeAmount* FindFree(const RunResult& run, const std::string& resource) {
  for (const FreeAmount& f : run.end.free) {
    if (f.resource == resource) return &f;
  }
  return nullptr;
}

std::string PerSecond(const RunResult& run) {
  if (run.seconds <= 0) return "-";
  return fmt::format("{:.0f}", static_cast<double>(run.decisions.size()) / run.seconds);
}

}  // namespace

std::string Bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0 || value == std::floor(value)) return fmt::format("{:.0f} {}", value, kUnits[unit]);
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

SummaryTable Summary(const Report& report) {
  SummaryTable t;
  t.header.push_back("");
  for (const VariantResult& v : report.variants) t.header.push_back(v.name);
  auto row = [&](std::string label, auto cell) {
    std::vector<std::string> r{std::move(label)};
    for (const VariantResult& v : report.variants) r.push_back(cell(v.run));
    t.rows.push_back(std::move(r));
  };
  const int pods = static_cast<int>(report.arrivals);
  row("pods admitted", [&](const RunResult& r) { return Percent(r.admitted, pods); });
  row("pods rejected", [&](const RunResult& r) { return Percent(r.rejected, pods); });
  std::set<std::string> reasons;
  for (const VariantResult& v : report.variants) {
    for (const auto& entry : v.run.rejections) reasons.insert(entry.first);
  }
  for (const std::string& reason : reasons) {
    row("  " + reason, [&](const RunResult& r) {
      auto it = r.rejections.find(reason);
      return fmt::format("{}", it == r.rejections.end() ? 0 : it->second);
    });
  }
  row("pods released", [](const RunResult& r) { return fmt::format("{}", r.releases); });
  row("pinned containers",
      [](const RunResult& r) { return fmt::format("{}", r.pinned_containers); });
  row("  on one NUMA node",
      [](const RunResult& r) { return Percent(r.single_numa_containers, r.pinned_containers); });
  row("  on the fewest NUMA nodes",
      [](const RunResult& r) { return Percent(r.fewest_nodes_containers, r.pinned_containers); });
  for (const std::string& resource : FreeResources(report)) {
    const std::string what = resource == "cpu" ? "CPUs" : resource;
    row("free " + what + " at the end", [&](const RunResult& r) {
      const FreeAmount* f = FindFree(r, resource);
      return f ? Amount(*f, f->free) : std::string("-");
    });
    row("  stranded", [&](const RunResult& r) {
      const FreeAmount* f = FindFree(r, resource);
      if (f == nullptr || f->unit == 0) return std::string("-");
      return fmt::format("{} (size {})", Amount(*f, f->stranded), Amount(*f, f->unit));
    });
  }
  row("admissions per second", PerSecond);
  row("kubelet combinations, largest",
      [](const RunResult& r) { return Count(r.max_combinations); });
  row(fmt::format("kubelet admissions > {:g} s", report.options.slow_seconds),
      [](const RunResult& r) { return fmt::format("{}", r.slow_admissions); });
  return t;
}

std::vector<std::string> SlowAdmissionWarnings(const Report& report) {
  std::vector<std::string> out;
  const double limit = report.options.slow_seconds * 1e9 / report.options.ns_per_combination;
  for (const VariantResult& v : report.variants) {
    for (const Decision& d : v.run.decisions) {
      if (d.combinations <= limit) continue;
      out.push_back(fmt::format(
          "{}: pod {}: kubelet's merge would enumerate {} combinations (about {:.3g} s); "
          "topologyd {}",
          v.name, d.name, Count(d.combinations),
          d.combinations * report.options.ns_per_combination / 1e9,
          d.admitted ? "admitted it" : "rejected it (" + d.reason + ")"));
    }
  }
  return out;
}

nlohmann::json ReportJson(const Report& report) {
  nlohmann::json doc;
  doc["machine"] = {
      {"source", report.machine}, {"numa_nodes", report.numa_nodes}, {"cpus", report.cpus}};
  doc["arrivals"] = report.arrivals;
  doc["kubelet_ns_per_combination"] = report.options.ns_per_combination;
  doc["variants"] = nlohmann::json::array();
  for (const VariantResult& v : report.variants) {
    const RunResult& r = v.run;
    nlohmann::json j;
    j["name"] = v.name;
    j["admitted"] = r.admitted;
    j["rejected"] = r.rejected;
    j["rejections"] = r.rejections;
    j["released"] = r.releases;
    j["containers"] = {{"pinned", r.pinned_containers},
                       {"single_numa", r.single_numa_containers},
                       {"fewest_nodes", r.fewest_nodes_containers}};
    j["free"] = nlohmann::json::array();
    for (const FreeAmount& f : r.end.free) {
      j["free"].push_back(
          {{"resource", f.resource}, {"free", f.free}, {"unit", f.unit}, {"stranded", f.stranded}});
    }
    j["numa"] = nlohmann::json::array();
    for (const NumaOccupancy& n : r.end.numa) {
      j["numa"].push_back({{"id", n.numa_id},
                           {"cpus", n.cpus.Size()},
                           {"exclusive_cpus", n.exclusive_cpus.Size()},
                           {"reserved_cpus", n.reserved_cpus.Size()},
                           {"memory_allocatable", n.memory_allocatable},
                           {"memory_used", n.memory_used}});
    }
    j["seconds"] = r.seconds;
    j["admissions_per_second"] =
        r.seconds > 0 ? static_cast<double>(r.decisions.size()) / r.seconds : 0.0;
    j["max_kubelet_combinations"] = r.max_combinations;
    j["slow_kubelet_admissions"] = r.slow_admissions;
    j["decisions"] = nlohmann::json::array();
    for (const Decision& d : r.decisions) {
      nlohmann::json dj = {{"uid", d.uid},
                           {"pod", d.name},
                           {"admitted", d.admitted},
                           {"kubelet_combinations", d.combinations}};
      if (d.admitted) {
        dj["containers"] = nlohmann::json::array();
        for (const state::ContainerRecord& c : d.containers) {
          nlohmann::json cj = {{"name", c.name},
                               {"exclusive", c.exclusive},
                               {"numa_affinity", c.numa_affinity},
                               {"memory_numa", state::MemoryNodes(c)},
                               {"devices", c.devices}};
          // A shared-pool container's CPUs are the pool of the moment: not a decision.
          if (c.exclusive) cj["cpus"] = c.cpus.ToString();
          dj["containers"].push_back(std::move(cj));
        }
      } else {
        dj["reason"] = d.reason;
        dj["message"] = d.message;
      }
      j["decisions"].push_back(std::move(dj));
    }
    doc["variants"].push_back(std::move(j));
  }
  return doc;
}

namespace {

constexpr std::string_view kStyle = R"(
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 0.3em 0.7em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.bar { display: flex; width: 24em; height: 1em; border: 1px solid #888; background: #eee; }
.bar span { display: block; height: 100%; }
.exclusive { background: #3572b0; } .reserved { background: #999; } .memory { background: #5a9e4b; }
.numa td { border: none; padding: 0.15em 0.5em; }
.cpus { display: flex; flex-wrap: wrap; width: 24em; }
.cpu { display: block; width: 0.55em; height: 1em; margin: 0 1px 1px 0; }
.free { background: #ddd; }
.pods td { text-align: left; }
.legend span { display: inline-block; width: 1em; height: 1em; vertical-align: middle; }
.summary td:first-child { white-space: pre; }
.warning { color: #a33; }
)";

std::string Bar(double fraction, const char* cls, const std::string& title) {
  const std::string fill = fraction <= 0
                               ? std::string()
                               : fmt::format("<span class=\"{}\" style=\"width:{:.2f}%\"></span>",
                                             cls, 100.0 * std::min(fraction, 1.0));
  return fmt::format("<div class=\"bar\" title=\"{}\">{}</div>", XmlEscape(title), fill);
}

// One cell per CPU of the node, coloured by what holds it: the bar of the node.
std::string CpuCells(const NumaOccupancy& n) {
  if (n.cpus.IsEmpty()) return "<div class=\"cpus\">no CPUs</div>";
  std::string out = "<div class=\"cpus\">";
  for (int id : n.cpus.ToVector()) {
    const char* state = n.exclusive_cpus.Contains(id)  ? "exclusive"
                        : n.reserved_cpus.Contains(id) ? "reserved"
                                                       : "free";
    out += fmt::format("<span class=\"cpu {}\" title=\"CPU {}: {}\"></span>", state, id, state);
  }
  return out + "</div>";
}

std::string OccupancySection(const VariantResult& v) {
  std::string out = fmt::format("<section class=\"variant\"><h3>{}</h3>\n<table class=\"numa\">",
                                XmlEscape(v.name));
  for (const NumaOccupancy& n : v.run.end.numa) {
    out += fmt::format("<tr><td>NUMA {}</td><td>{}</td><td>{} of {} CPUs exclusive</td>", n.numa_id,
                       CpuCells(n), n.exclusive_cpus.Size(), n.cpus.Size());
    auto mem = n.memory_allocatable.find("memory");
    if (mem != n.memory_allocatable.end() && mem->second > 0) {
      auto used = n.memory_used.find("memory");
      const uint64_t held = used == n.memory_used.end() ? 0 : used->second;
      out += fmt::format("<td>{}</td><td>{} of {} memory</td>",
                         Bar(static_cast<double>(held) / static_cast<double>(mem->second), "memory",
                             Bytes(held) + " of " + Bytes(mem->second)),
                         Bytes(held), Bytes(mem->second));
    }
    out += "</tr>\n";
  }
  return out + "</table></section>\n";
}

std::string ContainersText(const Decision& d) {
  std::string out;
  for (const state::ContainerRecord& c : d.containers) {
    out += out.empty() ? "" : "; ";
    out += c.name + ": " + (c.exclusive ? "CPUs " + c.cpus.ToString() : "shared pool");
    std::vector<int> nodes = state::MemoryNodes(c);
    if (!c.numa_affinity.empty()) out += fmt::format(", NUMA {}", fmt::join(c.numa_affinity, ","));
    if (!nodes.empty()) out += fmt::format(", memory on {}", fmt::join(nodes, ","));
    for (const auto& [resource, ids] : c.devices) {
      out += fmt::format(", {} {}", resource, fmt::join(ids, ","));
    }
  }
  return out;
}

// Every pod's decision, one row each, folded away: long workloads make long tables.
std::string DecisionsSection(const VariantResult& v) {
  std::string out = fmt::format(
      "<details><summary>{}: {} pods</summary>\n<table class=\"pods\"><tr><th>pod</th>"
      "<th>decision</th><th>what it holds, or why not</th></tr>\n",
      XmlEscape(v.name), v.run.decisions.size());
  for (const Decision& d : v.run.decisions) {
    out += fmt::format("<tr class=\"pod\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       XmlEscape(d.name), d.admitted ? "admitted" : XmlEscape(d.reason),
                       XmlEscape(d.admitted ? ContainersText(d) : d.message));
  }
  return out + "</table></details>\n";
}

}  // namespace

std::string ReportHtml(const Report& report) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>topoctl simulate</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<h1>topoctl simulate</h1>\n";
  out += fmt::format("<p>Machine: {} ({} NUMA nodes, {} CPUs). Workload: {} arrivals.</p>\n",
                     XmlEscape(report.machine), report.numa_nodes, report.cpus, report.arrivals);

  const SummaryTable summary = Summary(report);
  out += "<h2>Summary</h2>\n<table class=\"summary\">\n<tr>";
  for (size_t i = 0; i < summary.header.size(); ++i) {
    out += i == 0 ? "<th></th>"
                  : fmt::format("<th class=\"variant\">{}</th>", XmlEscape(summary.header[i]));
  }
  out += "</tr>\n";
  for (const auto& r : summary.rows) {
    out += "<tr>";
    for (const std::string& cell : r) out += "<td>" + XmlEscape(cell) + "</td>";
    out += "</tr>\n";
  }
  out += "</table>\n";

  out +=
      "<h2>Occupancy per NUMA node at the end</h2>\n<p class=\"legend\">"
      "<span class=\"exclusive\"></span> exclusive CPU &nbsp; <span class=\"reserved\"></span> "
      "reserved CPU &nbsp; <span class=\"free\"></span> free CPU &nbsp; "
      "<span class=\"memory\"></span> memory held by containers</p>\n";
  for (const VariantResult& v : report.variants) out += OccupancySection(v);

  out += "<h2>Rejection reasons</h2>\n";
  bool any = false;
  for (const VariantResult& v : report.variants) {
    // One example message per reason: the first pod rejected for it.
    std::map<std::string, const Decision*> first;
    for (const Decision& d : v.run.decisions) {
      if (!d.admitted) first.emplace(d.reason, &d);
    }
    if (first.empty()) continue;
    any = true;
    out += fmt::format(
        "<h3>{}</h3>\n<table class=\"reasons\"><tr><th>reason</th><th>pods</th>"
        "<th>first rejected pod and message</th></tr>\n",
        XmlEscape(v.name));
    for (const auto& [reason, d] : first) {
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}: {}</td></tr>\n", XmlEscape(reason),
                         v.run.rejections.at(reason), XmlEscape(d->name), XmlEscape(d->message));
    }
    out += "</table>\n";
  }
  if (!any) out += "<p>No pod was rejected.</p>\n";

  out += "<h2>Every pod</h2>\n";
  for (const VariantResult& v : report.variants) out += DecisionsSection(v);

  const std::vector<std::string> warnings = SlowAdmissionWarnings(report);
  out += fmt::format(
      "<h2>Admissions kubelet would take longer than {:g} s to decide</h2>\n"
      "<p>At {:g} ns per combination of kubelet's merge.</p>\n",
      report.options.slow_seconds, report.options.ns_per_combination);
  if (warnings.empty()) out += "<p>None.</p>\n";
  for (const std::string& w : warnings) out += "<p class=\"warning\">" + XmlEscape(w) + "</p>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace topologyd::simulate
