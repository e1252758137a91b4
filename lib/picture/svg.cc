#include "lib/picture/svg.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <vector>

#include "fmt/format.h"

#include "lib/picture/layout.h"
#include "lib/picture/palette.h"
#include "lib/xml_text/xml_text.h"

namespace topologyd::picture {
namespace {

namespace topo = topology;

constexpr int kMargin = 12;
constexpr int kLegendLine = 16;
constexpr int kLegendColumn = 300;        // narrowest legend column
constexpr int kLegendRows = 12;           // a legend longer than this gets more columns
constexpr int kLegendMinimumWidth = 480;  // a picture with a legend is at least this wide
constexpr int kMemoryMark = 9;

// The holder of an exclusive CPU or a device, for colours and tooltips.
struct Holder {
  int pod = -1;
  std::string what;  // "shop/web, container app" or "shop/web (nvidia.com/gpu)"
};

struct Owners {
  std::map<int, Holder> cpus;
  std::map<std::string, Holder> devices;   // by lower-case device id
  std::map<int, std::vector<int>> memory;  // NUMA id -> pods, ascending
};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string PodName(const PodDrawing& pod) { return pod.namespace_name + "/" + pod.name; }

Owners OwnersOf(const AllocationsDrawing& a) {
  Owners owners;
  for (size_t i = 0; i < a.pods.size(); ++i) {
    const int pod = static_cast<int>(i);
    std::set<int> memory;
    for (const ContainerDrawing& c : a.pods[i].containers) {
      for (int cpu : c.exclusive_cpus) {
        owners.cpus[cpu] = {pod, PodName(a.pods[i]) + ", container " + c.name};
      }
      memory.insert(c.memory_numa.begin(), c.memory_numa.end());
      for (const auto& [resource, id] : c.devices) {
        owners.devices[Lower(id)] = {pod, PodName(a.pods[i]) + " (" + resource + ")"};
      }
    }
    for (int numa : memory) owners.memory[numa].push_back(pod);
  }
  return owners;
}

// The fill of pod `index`: its colour, or the pattern defined for it in <defs>.
std::string PodFill(int index) {
  const PodStyle style = StyleOfPod(index);
  if (style.fill == Fill::kSolid) return std::string(style.colour);
  return fmt::format("url(#pod-style-{})", index % kPodStyles);
}

void AppendDefs(std::string& out, const AllocationsDrawing* a) {
  out +=
      "<defs>\n"
      "<pattern id=\"reserved-hatch\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"#e0e0e0\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"5\" stroke=\"#606060\" stroke-width=\"2\"/>"
      "</pattern>\n";
  const int patterns = a == nullptr ? 0 : std::min<int>(a->pods.size(), kPodStyles);
  for (int i = kPaletteSize; i < patterns; ++i) {
    const PodStyle style = StyleOfPod(i);
    if (style.fill == Fill::kStripes) {
      out += fmt::format(
          "<pattern id=\"pod-style-{}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(-45)\"><rect width=\"6\" height=\"6\" fill=\"{}\"/>"
          "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#ffffff\" stroke-width=\"2\"/>"
          "</pattern>\n",
          i, style.colour);
    } else {
      out += fmt::format(
          "<pattern id=\"pod-style-{}\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">"
          "<rect width=\"5\" height=\"5\" fill=\"{}\"/>"
          "<circle cx=\"2.5\" cy=\"2.5\" r=\"1.2\" fill=\"#ffffff\"/></pattern>\n",
          i, style.colour);
    }
  }
  out += "</defs>\n";
}

constexpr std::string_view kStyle =
    "<style>\n"
    "text{font-family:'DejaVu Sans',Verdana,sans-serif;fill:#222}\n"
    ".heading{font-size:9px;font-weight:bold}\n"
    "g.machine>rect{fill:#ffffff;stroke:#444}\n"
    "g.package>rect{fill:#eef1f5;stroke:#5a6b80}\n"
    "g.die>rect{fill:#e3e8ee;stroke:#7b8a9c;stroke-dasharray:4 2}\n"
    "g.numa>rect{fill:#fbfbf4;stroke:#8a7d3c;stroke-width:1.5}\n"
    "g.numa.cpuless>rect{fill:#f4efe2;stroke-dasharray:3 2}\n"
    "g.l3>rect{fill:#f2f6ee;stroke:#8fa57a}\n"
    "g.unplaced-devices>rect{fill:#f6f6f6;stroke:#999}\n"
    "g.core>rect{fill:#d9dde3;stroke:none}\n"
    "g.cpu>rect{fill:#ffffff;stroke:#666;stroke-width:0.6}\n"
    "g.cpu.reserved>rect{fill:url(#reserved-hatch)}\n"
    "g.cpu.other>rect{fill:#bdbdbd}\n"
    "g.cpu text{font-size:8px;text-anchor:middle}\n"
    "g.device>rect{fill:#ffffff;stroke:#6b5b95}\n"
    "g.device text{font-size:8px}\n"
    "text.light{fill:#ffffff}\n"
    ".legend{font-size:10px}\n"
    "</style>\n";

class Renderer {
 public:
  Renderer(const topo::Topology& m, const AllocationsDrawing* a)
      : m_(m), a_(a), owners_(a ? OwnersOf(*a) : Owners{}) {}

  void Draw(const picture::Box& box, std::string& out) const {
    switch (box.kind) {
      case BoxKind::kCpu:
        DrawCpu(box, out);
        return;
      case BoxKind::kDevice:
        DrawDevice(box, out);
        return;
      default:
        break;
    }
    const bool cpuless = box.kind == BoxKind::kNuma && box.id >= 0 &&
                         m_.FindNuma(box.id) != nullptr && m_.FindNuma(box.id)->cpus.IsEmpty();
    out += fmt::format("<g class=\"{}{}\"{}>", BoxKindName(box.kind), cpuless ? " cpuless" : "",
                       IdAttribute(box));
    const Rect& r = box.rect;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\"/>", r.x, r.y,
                       r.width, r.height);
    if (!box.label.empty()) {
      out += fmt::format("<text class=\"heading\" x=\"{}\" y=\"{}\">{}</text>", r.x + 4, r.y + 11,
                         XmlEscape(box.label));
    }
    if (box.kind == BoxKind::kNuma) MemoryMarks(box, out);
    out += "\n";
    for (const picture::Box& child : box.children) Draw(child, out);
    out += "</g>\n";
  }

  // The legend below the machine at `top`; returns its height.
  int Legend(int top, int width, std::string& out) const {
    if (a_ == nullptr) return 0;
    // One column while it is short; more, side by side, when a long list would make the
    // picture tall.
    const int entries = static_cast<int>(a_->pods.size()) + 3;
    const int columns = std::clamp((entries + kLegendRows - 1) / kLegendRows, 1,
                                   std::max(1, width / kLegendColumn));
    const int column_width = width / columns;
    int entry = 0;
    auto position = [&](int index) {
      return std::pair<int, int>{kMargin + (index % columns) * column_width,
                                 top + 22 + (index / columns) * kLegendLine};
    };
    out += fmt::format("<g class=\"legend\"><text class=\"heading\" x=\"{}\" y=\"{}\">{}</text>\n",
                       kMargin, top + 10,
                       a_->pods.empty() ? "No pods admitted" : "Pods (one colour each)");
    auto swatch_line = [&](const std::string& attributes, const std::string& fill,
                           const std::string& text, const std::string& tip) {
      const auto [x, y] = position(entry++);
      out += fmt::format(
          "<g{}><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" "
          "stroke=\"#666\" stroke-width=\"0.6\" style=\"fill:{}\"/>"
          "<text class=\"legend\" x=\"{}\" y=\"{}\">{}</text></g>\n",
          attributes, XmlEscape(tip), x, y - 10, fill, x + 17, y, XmlEscape(text));
    };
    const std::string reserved = a_->reserved.IsEmpty() ? "none" : a_->reserved.ToString();
    swatch_line(" class=\"legend-reserved\"", "url(#reserved-hatch)", "reserved CPUs: " + reserved,
                "reserved CPUs: " + reserved);
    const std::string shared = a_->shared_pool.IsEmpty() ? "none" : a_->shared_pool.ToString();
    swatch_line(" class=\"legend-shared\"", "#ffffff", "shared pool: " + shared,
                "shared pool: " + shared);
    if (HasOtherCpus()) {
      swatch_line(" class=\"legend-other\"", "#bdbdbd", "neither reserved, shared nor exclusive",
                  "CPUs in neither the shared pool, the reserved set nor a pod's exclusive CPUs");
    }
    for (size_t i = 0; i < a_->pods.size(); ++i) {
      const std::string text = PodSummary(static_cast<int>(i));
      swatch_line(fmt::format(" class=\"legend-pod\" id=\"pod-{}\" data-uid=\"{}\"", i,
                              XmlEscape(a_->pods[i].uid)),
                  PodFill(static_cast<int>(i)), Shorten(text, (column_width - 24) / 6), text);
    }
    out += "</g>\n";
    const int rows = (entry + columns - 1) / columns;
    return 22 + rows * kLegendLine;
  }

 private:
  static std::string IdAttribute(const picture::Box& box) {
    switch (box.kind) {
      case BoxKind::kPackage:
      case BoxKind::kL3:
        return fmt::format(" id=\"{}-{}\"", BoxKindName(box.kind), box.id);
      case BoxKind::kNuma:
        return box.id < 0 ? " id=\"numa-none\"" : fmt::format(" id=\"numa-{}\"", box.id);
      case BoxKind::kDie:
      case BoxKind::kCore:
        return fmt::format(" id=\"{}-{}-{}\"", BoxKindName(box.kind), box.package_id, box.id);
      default:
        return "";
    }
  }

  static std::string Shorten(const std::string& text, size_t chars) {
    if (text.size() <= chars) return text;
    size_t cut = chars - 1;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return text.substr(0, cut) + "…";
  }

  bool HasOtherCpus() const {
    for (const topo::Cpu& c : m_.cpus) {
      if (!a_->reserved.Contains(c.id) && !a_->shared_pool.Contains(c.id) &&
          !owners_.cpus.contains(c.id)) {
        return true;
      }
    }
    return false;
  }

  std::string PodSummary(int index) const {
    const PodDrawing& pod = a_->pods[index];
    CpuSet cpus;
    std::set<int> memory;
    std::vector<std::string> devices;
    for (const ContainerDrawing& c : pod.containers) {
      cpus.AddAll(c.exclusive_cpus);
      memory.insert(c.memory_numa.begin(), c.memory_numa.end());
      for (const auto& [resource, id] : c.devices) devices.push_back(resource + "=" + id);
    }
    std::string text = fmt::format("P{} {}: ", index + 1, PodName(pod));
    text += cpus.IsEmpty() ? "shared pool" : "CPUs " + cpus.ToString();
    if (!memory.empty()) text += fmt::format(" · memory NUMA {}", fmt::join(memory, ","));
    if (!devices.empty()) text += fmt::format(" · {}", fmt::join(devices, " "));
    return text;
  }

  std::string CpuTip(const topo::Cpu& c) const {
    std::string tip = fmt::format("CPU {} · core {} · package {}", c.id, c.core_id, c.package_id);
    if (c.die_id >= 0) tip += fmt::format(" · die {}", c.die_id);
    tip += c.numa_id >= 0 ? fmt::format(" · NUMA {}", c.numa_id) : " · no NUMA node";
    if (c.l3_id >= 0 && !m_.l3_groups.empty()) tip += fmt::format(" · L3 {}", c.l3_id);
    return tip;
  }

  void DrawCpu(const picture::Box& box, std::string& out) const {
    const topo::Cpu* c = m_.FindCpu(box.id);
    std::string tip = c != nullptr ? CpuTip(*c) : fmt::format("CPU {}", box.id);
    std::string state;
    std::string pod_attribute;
    std::string fill;
    bool light_text = false;
    if (a_ != nullptr) {
      auto owner = owners_.cpus.find(box.id);
      if (owner != owners_.cpus.end()) {
        state = " pod";
        pod_attribute = fmt::format(" data-pod=\"{}\"", owner->second.pod);
        fill = fmt::format(" style=\"fill:{}\"", PodFill(owner->second.pod));
        light_text = StyleOfPod(owner->second.pod).dark;
        tip += " — " + owner->second.what;
      } else if (a_->reserved.Contains(box.id)) {
        state = " reserved";
        tip += " — reserved";
      } else if (a_->shared_pool.Contains(box.id)) {
        state = " shared";
        tip += " — shared pool";
      } else {
        state = " other";
        tip += " — neither reserved, shared nor exclusive";
      }
    }
    const Rect& r = box.rect;
    out += fmt::format(
        "<g class=\"cpu{}\" id=\"cpu-{}\" data-cpu=\"{}\"{}><title>{}</title>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}/>"
        "<text x=\"{}\" y=\"{}\"{}{}>{}</text></g>\n",
        state, box.id, box.id, pod_attribute, XmlEscape(tip), r.x, r.y, r.width, r.height, fill,
        r.x + r.width / 2, r.y + r.height - 4, light_text ? " class=\"light\"" : "",
        box.id >= 1000 ? " style=\"font-size:6px\"" : "", box.id);
  }

  void DrawDevice(const picture::Box& box, std::string& out) const {
    const topo::PciDevice& d = m_.pci_devices[box.id];
    std::string tip = fmt::format("{} · {} · vendor {:04x} device {:04x}", d.busid,
                                  topo::DeviceKindName(d.kind), d.vendor_id, d.device_id);
    if (d.physfn_busid) tip += " · virtual function of " + *d.physfn_busid;
    if (!d.numa_nodes.empty()) tip += fmt::format(" · NUMA {}", fmt::join(d.numa_nodes, ","));
    std::string state;
    std::string fill;
    bool light_text = false;
    auto owner = owners_.devices.find(Lower(d.busid));
    if (owner != owners_.devices.end()) {
      state = " pod";
      fill = fmt::format(" style=\"fill:{}\"", PodFill(owner->second.pod));
      light_text = StyleOfPod(owner->second.pod).dark;
      tip += " — " + owner->second.what;
    }
    const Rect& r = box.rect;
    out += fmt::format(
        "<g class=\"device{}\" id=\"device-{}\" data-busid=\"{}\"{}><title>{}</title>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\"{}/>"
        "<text x=\"{}\" y=\"{}\"{}>{}</text></g>\n",
        state, box.id, XmlEscape(d.busid),
        owner != owners_.devices.end() ? fmt::format(" data-pod=\"{}\"", owner->second.pod) : "",
        XmlEscape(tip), r.x, r.y, r.width, r.height, fill, r.x + 3, r.y + r.height - 4,
        light_text ? " class=\"light\"" : "", XmlEscape(box.label));
  }

  // Marks in the heading of NUMA node `box` for the pods with memory there, right-aligned;
  // "+N" stands for the ones that do not fit.
  void MemoryMarks(const picture::Box& box, std::string& out) const {
    auto pods = owners_.memory.find(box.id);
    if (pods == owners_.memory.end() || box.id < 0) return;
    const std::vector<int>& list = pods->second;
    const size_t room = 4;
    const size_t shown = list.size() <= room ? list.size() : room - 1;
    int x = box.rect.x + box.rect.width - 4 - kMemoryMark;
    const int y = box.rect.y + 3;
    if (shown < list.size()) {
      out += fmt::format(
          "<text class=\"heading\" x=\"{}\" y=\"{}\" style=\"text-anchor:end\">+{}</text>", x + 9,
          y + 8, list.size() - shown);
      x -= kMemoryMark + 12;
    }
    for (size_t i = shown; i-- > 0;) {
      const int pod = list[i];
      out += fmt::format(
          "<rect class=\"memory\" data-pod=\"{}\" data-numa=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" "
          "height=\"{}\" style=\"fill:{}\" stroke=\"#333\" stroke-width=\"0.5\"><title>memory of "
          "P{} "
          "{}</title></rect>",
          pod, box.id, x, y, kMemoryMark, kMemoryMark, PodFill(pod), pod + 1,
          XmlEscape(PodName(a_->pods[pod])));
      x -= kMemoryMark + 2;
    }
    for (size_t i = shown; i < list.size(); ++i) {
      // Still one element per pod and node, for tools; drawn under the "+N".
      out += fmt::format(
          "<rect class=\"memory hidden\" data-pod=\"{}\" data-numa=\"{}\" x=\"{}\" y=\"{}\" "
          "width=\"0\" height=\"0\"/>",
          list[i], box.id, box.rect.x, box.rect.y);
    }
  }

  const topo::Topology& m_;
  const AllocationsDrawing* a_;
  Owners owners_;
};

}  // namespace

std::string MachineSvg(const topo::Topology& machine, const AllocationsDrawing* allocations) {
  picture::Box root = LayOutMachine(machine);
  // The layout starts at (0, 0); shift it by the margin.
  std::vector<picture::Box*> stack = {&root};
  while (!stack.empty()) {
    picture::Box* b = stack.back();
    stack.pop_back();
    b->rect.x += kMargin;
    b->rect.y += kMargin;
    for (picture::Box& child : b->children) stack.push_back(&child);
  }
  const Renderer renderer(machine, allocations);
  std::string body;
  renderer.Draw(root, body);
  const int machine_bottom = root.rect.y + root.rect.height;
  const int width = std::max(root.rect.width + 2 * kMargin, allocations ? kLegendMinimumWidth : 0);
  const int legend = renderer.Legend(machine_bottom + kMargin, width - 2 * kMargin, body);
  const int height = machine_bottom + kMargin + (legend > 0 ? legend + kMargin : 0);
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\">\n",
      width, height);
  out += kStyle;
  AppendDefs(out, allocations);
  out += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, height);
  out += body;
  out += "</svg>\n";
  return out;
}

}  // namespace topologyd::picture
