#include "tests/support/engine_model.h"

#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"

#include "lib/common/absl_fmt.h"
#include "lib/config/config_loader.h"
#include "lib/topology/hwloc_source.h"

namespace topologyd::testing {
namespace {

// Loading a machine through hwloc costs milliseconds; a fuzzer starts thousands of models.
absl::StatusOr<std::shared_ptr<const topology::Topology>> Machine(const std::string& synthetic) {
  static std::mutex mu;
  static auto* const cache = new std::map<std::string, std::shared_ptr<const topology::Topology>>;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(synthetic); it != cache->end()) return it->second;
  absl::StatusOr<topology::Topology> loaded =
      topology::LoadTopology(topology::TopologySource::Synthetic(synthetic));
  if (!loaded.ok()) return loaded.status();
  auto shared = std::make_shared<const topology::Topology>(*std::move(loaded));
  cache->emplace(synthetic, shared);
  return shared;
}

pod::Quantity Q(const std::string& text) { return *pod::Quantity::Parse(text); }

// A container's place in its pod, for the concurrency rule.
struct Place {
  size_t position;
  pod::ContainerRole role;
};

std::map<std::string, Place> Places(const pod::Pod& pod) {
  std::map<std::string, Place> out;
  const std::vector<pod::OrderedContainer> order = pod::StartOrder(pod);
  for (size_t i = 0; i < order.size(); ++i) out[order[i].spec->name] = {i, order[i].role};
  return out;
}

struct Holder {
  std::string uid;
  std::string container;
  Place place;
};

// Whether two holders of one CPU or device may hold it at once: only two containers of one
// pod that never run at the same time.
bool MayShare(const Holder& a, const Holder& b) {
  if (a.uid != b.uid) return false;
  const Holder& earlier = a.place.position < b.place.position ? a : b;
  return !pod::RunsAlongsideLater(earlier.place.role);
}

std::string Describe(const pod::Pod& pod) {
  std::vector<std::string> parts;
  for (const pod::OrderedContainer& c : pod::StartOrder(pod)) {
    std::string text = c.spec->name;
    if (c.role == pod::ContainerRole::kInit) text += "(init)";
    if (c.role == pod::ContainerRole::kSidecar) text += "(sidecar)";
    for (const auto& [name, q] : c.spec->requests)
      text += fmt::format(" {}={}", name, q.ToString());
    if (c.spec->limits.empty()) text += " no-limits";
    parts.push_back(text);
  }
  return fmt::format("{}: {}", pod.uid, fmt::join(parts, "; "));
}

std::string Describe(const state::PodRecord& record) {
  std::vector<std::string> parts;
  for (const state::ContainerRecord& c : record.containers) {
    std::string text = c.name + "=" + (c.exclusive ? c.cpus.ToString() : "shared");
    for (const auto& [resource, ids] : c.devices) {
      text += fmt::format(" {}:{}", resource, fmt::join(ids, ","));
    }
    parts.push_back(text);
  }
  return fmt::format("[{}]", fmt::join(parts, " "));
}

// What a container holds that re-admission must leave alone. A finished init container's
// memory blocks shrink when an app container takes them over (kubelet's accounting, so that a
// pod's blocks add up to what it holds); nothing moves there.
bool SameHoldings(const state::ContainerRecord& a, const state::ContainerRecord& b) {
  const bool finished_init = a.init && !a.restartable;
  return a.exclusive == b.exclusive && (!a.exclusive || a.cpus == b.cpus) &&
         a.devices == b.devices && (finished_init || a.memory == b.memory);
}

}  // namespace

const std::vector<ModelNode>& ModelNodes() {
  static const auto* const nodes = new std::vector<ModelNode>{
      {.name = "best-effort",
       .synthetic = "pack:1 numa:2 core:4 pu:2",
       .config = "cpuManagerPolicy: static\n"
                 "reservedSystemCPUs: \"0\"\n"
                 "topologyManagerPolicy: best-effort\n"},
      {.name = "single-numa-node-devices-memory",
       .synthetic = "pack:2 numa:2(memory=4GB) core:3 pu:2",
       .config = "cpuManagerPolicy: static\n"
                 "reservedSystemCPUs: \"0,1\"\n"
                 "topologyManagerPolicy: single-numa-node\n"
                 "memoryManagerPolicy: Static\n"
                 "reservedMemory: [{numaNode: 0, limits: {memory: 512Mi}}]\n"
                 "devices:\n"
                 "  - resourceName: example.com/dev\n"
                 "    devices: [{id: d0, numaNode: 0}, {id: d1, numaNode: 1},\n"
                 "              {id: d2, numaNode: 2}, {id: d3, numaNode: 3}, {id: d4}]\n"},
      {.name = "restricted-pod-scope-full-pcpus",
       .synthetic = "pack:2 numa:1 core:6 pu:2",
       .config = "cpuManagerPolicy: static\n"
                 "reservedSystemCPUs: \"0,1\"\n"
                 "topologyManagerPolicy: restricted\n"
                 "topologyManagerScope: pod\n"
                 "cpuManagerPolicyOptions: {full-pcpus-only: \"true\"}\n"
                 "devices:\n"
                 "  - resourceName: example.com/nic\n"
                 "    devices: [{id: n0, numaNode: 0}, {id: n1, numaNode: 1}]\n"},
      {.name = "policy-none",
       .synthetic = "numa:4 core:2 pu:2",
       .config = "cpuManagerPolicy: static\n"
                 "reservedSystemCPUs: \"0\"\n"
                 "topologyManagerPolicy: none\n"},
      {.name = "strict-reservation-distribute",
       .synthetic = "pack:2 numa:2 core:4 pu:1",
       .config = "cpuManagerPolicy: static\n"
                 "reservedSystemCPUs: \"0,4\"\n"
                 "topologyManagerPolicy: best-effort\n"
                 "cpuManagerPolicyOptions: {strict-cpu-reservation: \"true\",\n"
                 "                          distribute-cpus-across-numa: \"true\"}\n"},
  };
  return *nodes;
}

EngineModel::EngineModel(ModelNode node, std::string state_dir)
    : node_(std::move(node)), state_dir_(std::move(state_dir)) {}

EngineModel::~EngineModel() = default;

absl::StatusOr<std::unique_ptr<EngineModel>> EngineModel::Start(const ModelNode& node,
                                                                const std::string& state_dir) {
  std::unique_ptr<EngineModel> model(new EngineModel(node, state_dir));
  absl::StatusOr<config::Config> config = config::ParseConfig(
      node.config + fmt::format("stateDir: {}\n", state_dir), node.name + ".yaml");
  if (!config.ok()) return config.status();
  for (const config::DevicePoolConfig& pool : config->devices) {
    model->resources_.push_back(pool.resource_name);
  }
  model->config_ = std::make_shared<const config::Config>(*std::move(config));
  absl::StatusOr<std::shared_ptr<const topology::Topology>> machine = Machine(node.synthetic);
  if (!machine.ok()) return machine.status();
  model->topology_ = *std::move(machine);
  std::filesystem::create_directories(state_dir);
  if (absl::Status started = model->StartEngine(); !started.ok()) return started;
  return model;
}

absl::Status EngineModel::StartEngine() {
  engine::EngineOptions options;
  options.config = config_;
  options.topology = topology_;
  options.fs = &fs_;
  absl::StatusOr<std::unique_ptr<engine::Engine>> engine =
      engine::Engine::Start(std::move(options));
  if (!engine.ok()) return engine.status();
  engine_ = *std::move(engine);
  return absl::OkStatus();
}

std::string EngineModel::History() const { return fmt::format("{}", fmt::join(history_, "\n")); }

absl::Status EngineModel::Violation(const std::string& what) const {
  return absl::InternalError(
      fmt::format("{} (node {}, after {} steps)", what, node_.name, history_.size()));
}

pod::Pod EngineModel::RandomPod(Choices& choices) {
  pod::Pod p;
  p.uid = fmt::format("p{}", next_uid_++);
  p.namespace_name = "default";
  p.name = "pod-" + p.uid;
  const bool guaranteed = choices.Below(4) != 0;
  auto container = [&](std::string name) {
    pod::Container c;
    c.name = std::move(name);
    if (guaranteed) {
      c.requests["cpu"] = Q(choices.Below(5) == 0 ? "1500m" : std::to_string(1 + choices.Below(3)));
      c.requests["memory"] = Q(fmt::format("{}Mi", 64 * (1 + choices.Below(4))));
      for (const std::string& resource : resources_) {
        if (choices.Below(3) == 0) c.requests[resource] = Q("1");
      }
      c.limits = c.requests;
    } else {
      c.requests["cpu"] = Q("500m");
      c.requests["memory"] = Q("64Mi");
    }
    return c;
  };
  const uint32_t inits = choices.Below(4);
  for (uint32_t i = 0; i < inits; ++i) {
    pod::Container c = container(fmt::format("i{}", i));
    c.restart_always = choices.Below(2) == 0;
    p.init_containers.push_back(std::move(c));
  }
  const uint32_t apps = 1 + choices.Below(3);
  for (uint32_t i = 0; i < apps; ++i) p.containers.push_back(container(fmt::format("a{}", i)));
  return p;
}

absl::Status EngineModel::AdmitNew(Choices& choices) {
  const pod::Pod pod = RandomPod(choices);
  const engine::AllocationsView before = engine_->ListAllocations();
  absl::StatusOr<engine::AdmitReply> reply = engine_->Admit(pod);
  if (!reply.ok()) return Violation(fmt::format("Admit failed: {}", reply.status().message()));
  const engine::AllocationsView after = engine_->ListAllocations();
  if (!reply->admitted) {
    ++refused_;
    history_.push_back(fmt::format("admit {} -> refused: {}", Describe(pod), reply->reason));
    if (!(after.state == before.state)) return Violation("a refused admission changed the state");
    return absl::OkStatus();
  }
  ++admitted_;
  pods_[pod.uid] = pod;
  history_.push_back(
      fmt::format("admit {} -> {}", Describe(pod), Describe(after.state.pods.at(pod.uid))));
  return absl::OkStatus();
}

absl::Status EngineModel::AdmitAgain(Choices& choices) {
  if (pods_.empty()) return AdmitNew(choices);
  auto it = pods_.begin();
  std::advance(it, choices.Below(static_cast<uint32_t>(pods_.size())));
  const pod::Pod& pod = it->second;
  const engine::AllocationsView before = engine_->ListAllocations();
  absl::StatusOr<engine::AdmitReply> reply = engine_->Admit(pod);
  if (!reply.ok()) return Violation(fmt::format("Admit failed: {}", reply.status().message()));
  const engine::AllocationsView after = engine_->ListAllocations();
  auto was = before.state.pods.find(pod.uid);
  auto now = after.state.pods.find(pod.uid);
  history_.push_back(fmt::format("admit again {} -> {}", pod.uid,
                                 reply->admitted
                                     ? Describe(now->second)
                                     : "refused: " + reply->reason + ": " + reply->message));
  if (!reply->admitted) {
    if (!(after.state == before.state))
      return Violation("a refused re-admission changed the state");
    return absl::OkStatus();
  }
  if (now == after.state.pods.end()) return Violation("an admitted pod has no record");
  if (was == before.state.pods.end()) return absl::OkStatus();
  for (const state::ContainerRecord& kept : was->second.containers) {
    const state::ContainerRecord* again = state::FindContainer(after.state, pod.uid, kept.name);
    if (again == nullptr || !SameHoldings(kept, *again)) {
      return Violation(fmt::format("re-admission moved container {}/{}: {} -> {}", pod.uid,
                                   kept.name, Describe(was->second), Describe(now->second)));
    }
  }
  return absl::OkStatus();
}

absl::Status EngineModel::ReleasePod(Choices& choices) {
  if (pods_.empty()) return AdmitNew(choices);
  auto it = pods_.begin();
  std::advance(it, choices.Below(static_cast<uint32_t>(pods_.size())));
  const std::string uid = it->first;
  pods_.erase(it);
  absl::StatusOr<uint64_t> released = engine_->Release(uid, std::nullopt);
  history_.push_back(fmt::format("release {} -> {}", uid, released.status().ToString()));
  // A pod whose containers were all released one by one may be gone already.
  if (!released.ok() && !absl::IsNotFound(released.status())) {
    return Violation(fmt::format("Release failed: {}", released.status().message()));
  }
  if (engine_->ListAllocations().state.pods.contains(uid)) {
    return Violation("a released pod is still admitted");
  }
  return absl::OkStatus();
}

absl::Status EngineModel::ReleaseContainer(Choices& choices) {
  const engine::AllocationsView view = engine_->ListAllocations();
  std::vector<std::pair<std::string, std::string>> held;
  for (const auto& [uid, record] : view.state.pods) {
    for (const state::ContainerRecord& c : record.containers) held.emplace_back(uid, c.name);
  }
  if (held.empty()) return AdmitNew(choices);
  const auto& [uid, name] = held[choices.Below(static_cast<uint32_t>(held.size()))];
  absl::StatusOr<uint64_t> released = engine_->Release(uid, name);
  history_.push_back(fmt::format("release {}/{} -> {}", uid, name, released.status().ToString()));
  if (!released.ok())
    return Violation(fmt::format("Release failed: {}", released.status().message()));
  if (state::FindContainer(engine_->ListAllocations().state, uid, name) != nullptr) {
    return Violation("a released container is still held");
  }
  return absl::OkStatus();
}

absl::Status EngineModel::Restart() {
  const engine::AllocationsView before = engine_->ListAllocations();
  engine_.reset();
  history_.push_back("restart");
  if (absl::Status started = StartEngine(); !started.ok()) {
    return Violation(fmt::format("the engine does not start again: {}", started.message()));
  }
  const engine::AllocationsView after = engine_->ListAllocations();
  if (!(after.state == before.state) || !(after.shared_pool == before.shared_pool)) {
    return Violation("the state after a restart differs from the one before");
  }
  return absl::OkStatus();
}

absl::Status EngineModel::Reload(Choices& choices) {
  config::Config next = *config_;
  std::string change;
  switch (choices.Below(3)) {
    case 0:  // live
      next.reconcile_period = std::chrono::seconds(1 + choices.Below(20));
      change = "reconcilePeriod";
      break;
    case 1:  // restart-only: refused, nothing changes
      next.reserved_system_cpus = "";
      next.cpu_reserved_count = 3;
      change = "reserved CPUs";
      break;
    default:
      change = "nothing";
      break;
  }
  const engine::AllocationsView before = engine_->ListAllocations();
  const engine::ReloadRecord record = engine_->Reload(next);
  history_.push_back(fmt::format("reload ({}) -> applied [{}] refused [{}]", change,
                                 fmt::join(record.applied_keys, ","),
                                 fmt::join(record.refused_keys, ",")));
  const engine::AllocationsView after = engine_->ListAllocations();
  if (!(after.state.pods == before.state.pods) || !(after.shared_pool == before.shared_pool)) {
    return Violation("a reload changed the allocations");
  }
  return absl::OkStatus();
}

absl::Status EngineModel::Step(Choices& choices) {
  absl::Status done;
  const uint32_t op = choices.Below(20);
  if (op < 6) {
    done = AdmitNew(choices);
  } else if (op < 10) {
    done = AdmitAgain(choices);
  } else if (op < 14) {
    done = ReleaseContainer(choices);
  } else if (op < 16) {
    done = ReleasePod(choices);
  } else if (op < 18) {
    done = Restart();
  } else {
    done = Reload(choices);
  }
  if (!done.ok()) return done;
  return CheckState();
}

absl::Status EngineModel::CheckState() const {
  const engine::AllocationsView view = engine_->ListAllocations();
  std::map<std::string, std::map<std::string, Place>> places;
  for (const auto& [uid, pod] : pods_) places[uid] = Places(pod);
  auto holder = [&](const std::string& uid, const std::string& name) {
    Place place{0, pod::ContainerRole::kApp};
    if (auto pod = places.find(uid); pod != places.end()) {
      if (auto c = pod->second.find(name); c != pod->second.end()) place = c->second;
    }
    return Holder{uid, name, place};
  };
  std::map<int, std::vector<Holder>> cpu_holders;
  std::map<std::pair<std::string, std::string>, std::vector<Holder>> device_holders;
  CpuSet exclusive;
  for (const auto& [uid, record] : view.state.pods) {
    for (const state::ContainerRecord& c : record.containers) {
      if (c.exclusive) {
        exclusive.AddAll(c.cpus);
        for (int cpu : c.cpus) cpu_holders[cpu].push_back(holder(uid, c.name));
      }
      for (const auto& [resource, ids] : c.devices) {
        for (const std::string& id : ids) {
          device_holders[{resource, id}].push_back(holder(uid, c.name));
        }
      }
    }
  }
  auto shared_wrongly = [&](const std::vector<Holder>& holders) -> std::optional<std::string> {
    for (size_t i = 0; i < holders.size(); ++i) {
      for (size_t j = i + 1; j < holders.size(); ++j) {
        if (!MayShare(holders[i], holders[j])) {
          return fmt::format("{}/{} and {}/{}", holders[i].uid, holders[i].container,
                             holders[j].uid, holders[j].container);
        }
      }
    }
    return std::nullopt;
  };
  for (const auto& [cpu, holders] : cpu_holders) {
    if (auto who = shared_wrongly(holders)) {
      return Violation(
          fmt::format("exclusive CPU {} is held by {}, which can run at the same time", cpu, *who));
    }
  }
  for (const auto& [device, holders] : device_holders) {
    if (auto who = shared_wrongly(holders)) {
      return Violation(fmt::format("{} device {} is held by {}, which can run at the same time",
                                   device.first, device.second, *who));
    }
  }
  if (exclusive.Intersects(view.reserved)) {
    return Violation(fmt::format("reserved CPUs {} are exclusive",
                                 exclusive.Intersection(view.reserved).ToString()));
  }
  const CpuSet all = engine_->policy()->empty_state.cpu.default_cpu_set;
  if (exclusive.Intersects(view.shared_pool) || !(exclusive.Union(view.shared_pool) == all)) {
    return Violation(fmt::format("shared pool {} is not {} less the exclusive CPUs {}",
                                 view.shared_pool.ToString(), all.ToString(),
                                 exclusive.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace topologyd::testing
