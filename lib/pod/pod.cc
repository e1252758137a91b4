#include "lib/pod/pod.h"

#include <algorithm>

#include "fmt/format.h"

#include "lib/common/quote.h"

namespace topologyd::pod {
namespace {

void AddTo(ResourceList& into, const ResourceList& add) {
  for (const auto& [name, q] : add) into[name] += q;
}

void MaxInto(ResourceList& into, const ResourceList& other) {
  for (const auto& [name, q] : other) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else if (it->second < q) {
      it->second = q;
    }
  }
}

// AggregateContainerRequests / AggregateContainerLimits share this shape; `pick` selects
// requests or limits.
template <typename Pick>
ResourceList Aggregate(const Pod& pod, Pick pick) {
  ResourceList result;
  for (const Container& c : pod.containers) AddTo(result, pick(c));
  ResourceList sidecars;  // cumulative restartable init containers so far
  ResourceList init_max;
  for (const Container& c : pod.init_containers) {
    if (c.restart_always) {
      AddTo(result, pick(c));
      AddTo(sidecars, pick(c));
      MaxInto(init_max, sidecars);
    } else {
      ResourceList tmp = pick(c);
      AddTo(tmp, sidecars);
      MaxInto(init_max, tmp);
    }
  }
  MaxInto(result, init_max);
  return result;
}

bool IsQosResource(std::string_view name) {
  return name == kResourceCpu || name == kResourceMemory;
}

}  // namespace

std::string_view QosClassName(QosClass qos) {
  switch (qos) {
    case QosClass::kGuaranteed:
      return "Guaranteed";
    case QosClass::kBurstable:
      return "Burstable";
    case QosClass::kBestEffort:
      return "BestEffort";
  }
  return "BestEffort";
}

bool IsHugePageResourceName(std::string_view name) {
  return name.size() > kHugePagesPrefix.size() &&
         name.substr(0, kHugePagesPrefix.size()) == kHugePagesPrefix;
}

bool IsNativeResourceName(std::string_view name) {
  // apimachinery's IsNativeResource: no domain, or the kubernetes.io domain.
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) return true;
  const std::string_view domain = name.substr(0, slash);
  return domain == "kubernetes.io" ||
         (domain.size() > 14 && domain.substr(domain.size() - 14) == ".kubernetes.io");
}

bool IsExtendedResourceName(std::string_view name) {
  if (IsNativeResourceName(name)) return false;
  if (name.substr(0, 9) == "requests.") return false;
  return true;
}

absl::Status ValidateResourceQuantity(std::string_view name, const Quantity& value) {
  if (value.IsNegative()) {
    return absl::InvalidArgumentError("must be greater than or equal to 0");
  }
  // apimachinery's test is MilliValue() % 1000 != 0, so a fraction that rounds up to a whole
  // (0.9995) passes; we keep that, as refusing more would refuse pods the API server accepted.
  // Tested on the nano part because our MilliValue() saturates above ~4.6e15.
  const bool whole = value.nanos() == 0 || value.nanos() > 999'000'000;
  if (IsExtendedResourceName(name) && !whole) {
    return absl::InvalidArgumentError(fmt::format("must be an integer (got {})", value.ToString()));
  }
  if (IsHugePageResourceName(name)) {
    // IsHugePageResourceValueDivisible: the size is the name's suffix, parsed as a quantity.
    const std::string_view size = name.substr(kHugePagesPrefix.size());
    auto page = Quantity::Parse(size);
    if (!page.ok() || page->IsNegative() || page->IsZero() || page->MilliValue() % 1000 != 0) {
      return absl::InvalidArgumentError(
          fmt::format("invalid hugepages page size {}", QuoteForMessage(size)));
    }
    if (value.Value() % page->Value() != 0) {
      // `size` parsed, so it is printable; only its length is unbounded ("000...02Mi").
      const std::string shown =
          size.size() <= kMaxQuotedBytes ? std::string(size) : page->ToString();
      return absl::InvalidArgumentError(
          fmt::format("must be a multiple of {} (got {})", shown, value.ToString()));
    }
  }
  return absl::OkStatus();
}

void ApplyRequestDefaults(Pod& pod) {
  auto apply = [](Container& c) {
    for (const auto& [name, q] : c.limits) c.requests.try_emplace(name, q);
  };
  for (Container& c : pod.init_containers) apply(c);
  for (Container& c : pod.containers) apply(c);
}

QosClass ComputeQos(const Pod& pod) {
  ResourceList requests;
  ResourceList limits;
  bool guaranteed = true;
  auto visit = [&](const Container& c) {
    for (const auto& [name, q] : c.requests) {
      if (IsQosResource(name) && Quantity() < q) requests[name] += q;
    }
    bool cpu_limit = false;
    bool memory_limit = false;
    for (const auto& [name, q] : c.limits) {
      if (IsQosResource(name) && Quantity() < q) {
        limits[name] += q;
        if (name == kResourceCpu) cpu_limit = true;
        if (name == kResourceMemory) memory_limit = true;
      }
    }
    if (!cpu_limit || !memory_limit) guaranteed = false;
  };
  for (const Container& c : pod.containers) visit(c);
  for (const Container& c : pod.init_containers) visit(c);
  if (requests.empty() && limits.empty()) return QosClass::kBestEffort;
  if (guaranteed) {
    for (const auto& [name, q] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second != q) {
        guaranteed = false;
        break;
      }
    }
  }
  if (guaranteed && requests.size() == limits.size()) return QosClass::kGuaranteed;
  return QosClass::kBurstable;
}

const Container* FindContainer(const Pod& pod, std::string_view name) {
  for (const Container& c : pod.init_containers) {
    if (c.name == name) return &c;
  }
  for (const Container& c : pod.containers) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool IsRegularInitContainer(const Pod& pod, std::string_view name) {
  for (const Container& c : pod.init_containers) {
    if (c.name == name) return !c.restart_always;
  }
  return false;
}

bool IsSidecarContainer(const Pod& pod, std::string_view name) {
  for (const Container& c : pod.init_containers) {
    if (c.name == name) return c.restart_always;
  }
  return false;
}

std::vector<OrderedContainer> StartOrder(const Pod& pod) {
  std::vector<OrderedContainer> out;
  out.reserve(pod.init_containers.size() + pod.containers.size());
  for (const Container& c : pod.init_containers) {
    out.push_back({&c, c.restart_always ? ContainerRole::kSidecar : ContainerRole::kInit});
  }
  for (const Container& c : pod.containers) out.push_back({&c, ContainerRole::kApp});
  return out;
}

ResourceList EffectivePodRequests(const Pod& pod) {
  return Aggregate(pod, [](const Container& c) { return c.requests; });
}

ResourceList EffectivePodLimits(const Pod& pod) {
  return Aggregate(pod, [](const Container& c) { return c.limits; });
}

}  // namespace topologyd::pod
