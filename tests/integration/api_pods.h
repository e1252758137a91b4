// Pods for the topologyd API in integration tests.
#pragma once

#include <string>

#include "topologyd/v1/topologyd.pb.h"

namespace topologyd::testing {

// A Guaranteed pod `uid` (also its name, in namespace "default") with one container "app"
// asking for `cpu` and 128Mi of memory, limits equal to requests.
inline ::topologyd::v1::Pod GuaranteedPod(const std::string& uid, const std::string& cpu) {
  ::topologyd::v1::Pod pod;
  pod.set_uid(uid);
  pod.set_namespace_("default");
  pod.set_name(uid);
  ::topologyd::v1::Container* c = pod.add_containers();
  c->set_name("app");
  (*c->mutable_requests())["cpu"] = cpu;
  (*c->mutable_requests())["memory"] = "128Mi";
  *c->mutable_limits() = c->requests();
  return pod;
}

}  // namespace topologyd::testing
