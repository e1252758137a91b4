#include "lib/shim/pod_book.h"

#include <algorithm>

namespace topologyd::shim {

void PodBook::PutSandbox(SandboxRecord sandbox) {
  std::string id = sandbox.id;
  sandboxes_[id] = std::move(sandbox);
}

const SandboxRecord* PodBook::Sandbox(const std::string& id) const {
  auto it = sandboxes_.find(id);
  return it == sandboxes_.end() ? nullptr : &it->second;
}

const SandboxRecord* PodBook::SandboxOfPod(const std::string& pod_uid) const {
  const SandboxRecord* newest = nullptr;
  for (const auto& [id, sandbox] : sandboxes_) {
    if (sandbox.pod_uid == pod_uid && (newest == nullptr || sandbox.attempt >= newest->attempt)) {
      newest = &sandbox;
    }
  }
  return newest;
}

void PodBook::ForgetSandbox(const std::string& id) {
  std::erase_if(containers_,
                [&](const auto& entry) { return entry.second.record.sandbox_id == id; });
  auto sandbox = sandboxes_.find(id);
  if (sandbox == sandboxes_.end()) return;
  const std::string pod_uid = sandbox->second.pod_uid;
  sandboxes_.erase(sandbox);
  if (SandboxOfPod(pod_uid) == nullptr) quota_lifted_pods_.erase(pod_uid);
}

bool PodBook::MarkPodQuotaLifted(const std::string& pod_uid) {
  return quota_lifted_pods_.insert(pod_uid).second;
}

void PodBook::PutContainer(ContainerRecord container) {
  auto it = containers_.find(container.id);
  if (it != containers_.end()) {
    it->second.record = std::move(container);
    return;
  }
  std::string id = container.id;
  containers_.emplace(std::move(id), Entry{next_sequence_++, std::move(container)});
}

const ContainerRecord* PodBook::Container(const std::string& id) const {
  auto it = containers_.find(id);
  return it == containers_.end() ? nullptr : &it->second.record;
}

void PodBook::ForgetContainer(const std::string& id) { containers_.erase(id); }

std::set<std::string> PodBook::ContainerIds() const {
  std::set<std::string> ids;
  for (const auto& [id, entry] : containers_) ids.insert(id);
  return ids;
}

std::vector<const ContainerRecord*> PodBook::ContainersOfPod(const std::string& pod_uid) const {
  std::vector<const Entry*> entries;
  for (const auto& [id, entry] : containers_) {
    if (entry.record.pod_uid == pod_uid) entries.push_back(&entry);
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry* a, const Entry* b) { return a->sequence < b->sequence; });
  std::vector<const ContainerRecord*> records;
  records.reserve(entries.size());
  for (const Entry* e : entries) records.push_back(&e->record);
  return records;
}

std::vector<std::pair<std::string, podspec::CriResources>> PodBook::Resources(
    const std::string& pod_uid) const {
  std::vector<std::pair<std::string, podspec::CriResources>> known;
  for (const ContainerRecord* c : ContainersOfPod(pod_uid)) {
    if (!c->resources) continue;
    auto same =
        std::find_if(known.begin(), known.end(), [&](const auto& k) { return k.first == c->name; });
    if (same == known.end()) {
      known.emplace_back(c->name, *c->resources);
    } else {
      same->second = *c->resources;  // a later instance (restart) of the same container
    }
  }
  return known;
}

}  // namespace topologyd::shim
