// topoctl containers: how a container's cpuset as another party holds it (the container
// runtime's stored resources, the cgroup's files) compares with topologyd's decision. Pure:
// the command reads the values, these functions judge them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace topoctl {

// A cpuset as one source holds it: its CPU and memory-node lists, or why it could not be read.
struct CpusetReading {
  std::string cpus;  // Linux list syntax; empty = none set
  std::string mems;  // empty = none set
  // Why the reading is missing (then cpus and mems mean nothing); empty when it was read.
  std::string unknown;
};

// "agrees", "differs: <source> <what it holds>" or "unknown: <why>". `want_cpus` is
// topologyd's CPU list (the shared pool for a shared-pool container); `want_mems` its memory
// nodes, compared only when topologyd places memory (non-empty). Lists compare as sets
// ("0,1,2,3" agrees with "0-3"); a list that does not parse is unknown.
std::string CompareCpuset(const std::string& want_cpus, const std::vector<int>& want_mems,
                          const CpusetReading& got, const std::string& source);

}  // namespace topoctl
