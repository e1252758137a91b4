#include "shim/runtime_book.h"

namespace topologyd::shim {

void RuntimeBook::PutSandbox(SandboxRecord sandbox) {
  absl::MutexLock lock(&mu_);
  book_.PutSandbox(std::move(sandbox));
}

void RuntimeBook::PutSandboxIfNew(const SandboxRecord& sandbox) {
  absl::MutexLock lock(&mu_);
  if (book_.Sandbox(sandbox.id) == nullptr) book_.PutSandbox(sandbox);
}

bool RuntimeBook::HasSandbox(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  return book_.Sandbox(id) != nullptr;
}

std::optional<SandboxRecord> RuntimeBook::Sandbox(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  const SandboxRecord* sandbox = book_.Sandbox(id);
  if (sandbox == nullptr) return std::nullopt;
  return *sandbox;
}

KnownResources RuntimeBook::Resources(const std::string& pod_uid) const {
  absl::MutexLock lock(&mu_);
  return book_.Resources(pod_uid);
}

bool RuntimeBook::HasContainers(const std::string& pod_uid) const {
  absl::MutexLock lock(&mu_);
  return !book_.ContainersOfPod(pod_uid).empty();
}

bool RuntimeBook::MarkPodQuotaLifted(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  return book_.MarkPodQuotaLifted(pod_uid);
}

void RuntimeBook::PutContainer(ContainerRecord container, std::optional<Placement> given) {
  absl::MutexLock lock(&mu_);
  if (given) given_[container.id] = std::move(*given);
  book_.PutContainer(std::move(container));
}

std::optional<ContainerRecord> RuntimeBook::Container(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  const ContainerRecord* container = book_.Container(id);
  if (container == nullptr) return std::nullopt;
  return *container;
}

std::set<std::string> RuntimeBook::ContainerIds() const {
  absl::MutexLock lock(&mu_);
  return book_.ContainerIds();
}

void RuntimeBook::ForgetContainer(const std::string& id) {
  absl::MutexLock lock(&mu_);
  book_.ForgetContainer(id);
  given_.erase(id);
}

std::optional<RuntimeBook::Removed> RuntimeBook::RemoveContainer(const std::string& id) {
  absl::MutexLock lock(&mu_);
  const ContainerRecord* container = book_.Container(id);
  if (container == nullptr) return std::nullopt;
  Removed removed{*container, false};
  for (const ContainerRecord* other : book_.ContainersOfPod(container->pod_uid)) {
    removed.newer_instance =
        removed.newer_instance || (other->name == container->name && other->id != container->id &&
                                   other->attempt > container->attempt);
  }
  book_.ForgetContainer(id);
  given_.erase(id);
  return removed;
}

std::optional<std::string> RuntimeBook::EndSandbox(const std::string& id, bool removed) {
  absl::MutexLock lock(&mu_);
  const SandboxRecord* sandbox = book_.Sandbox(id);
  if (sandbox == nullptr) return std::nullopt;
  std::string pod_uid = sandbox->pod_uid;
  const bool newest = book_.SandboxOfPod(pod_uid)->id == id;
  if (removed) book_.ForgetSandbox(id);
  if (!newest) return std::nullopt;
  return pod_uid;
}

void RuntimeBook::ForgetUnlisted(const std::set<std::string>& known_before,
                                 const std::set<std::string>& listed) {
  absl::MutexLock lock(&mu_);
  for (const std::string& id : known_before) {
    if (listed.contains(id)) continue;
    book_.ForgetContainer(id);
    given_.erase(id);
  }
}

void RuntimeBook::RecordGiven(const std::string& id, const Placement& placement,
                              bool only_if_unknown) {
  absl::MutexLock lock(&mu_);
  if (only_if_unknown) {
    given_.try_emplace(id, placement);
  } else {
    given_[id] = placement;
  }
}

std::vector<std::pair<std::string, Placement>> RuntimeBook::PushesDue(
    std::vector<std::pair<std::string, Placement>> bound) const {
  std::vector<std::pair<std::string, Placement>> due;
  absl::MutexLock lock(&mu_);
  for (auto& [id, placement] : bound) {
    auto given = given_.find(id);
    if (given == given_.end() || given->second.cpus != placement.cpus ||
        given->second.mems != placement.mems) {
      due.emplace_back(id, std::move(placement));
    }
  }
  return due;
}

void RuntimeBook::RecordPush(const std::string& id, const Placement& placement, bool taken) {
  absl::MutexLock lock(&mu_);
  if (taken || book_.Container(id) == nullptr) given_[id] = placement;
}

}  // namespace topologyd::shim
