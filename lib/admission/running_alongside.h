// The CPUs a container of a pod being admitted must not take over from the pod's finished init
// containers: those held by the pod's containers that can run at the same time as it
// (pod::RunsAlongsideLater). On a first admission that is exactly what kubelet's reuse
// bookkeeping already leaves out; it matters when a pod is admitted again after some of its
// containers were released, because the containers it keeps hold CPUs that the replayed
// bookkeeping of its init containers offers again.
//
// Built once per admission and told each container's CPUs as they are allocated in start
// order, so each query costs one CPU-set union, whatever the number of containers.
//
// Thread-compatible value.
#pragma once

#include <cstddef>
#include <vector>

#include "lib/cpuset/cpuset.h"
#include "lib/pod/pod.h"

namespace topologyd::admission {

class RunningAlongside {
 public:
  // `order` is the pod's start order; held[i] what container i holds before this admission.
  RunningAlongside(const std::vector<pod::OrderedContainer>& order, std::vector<CpuSet> held);

  // What the containers that can run with container `i` hold. Every container before `i` must
  // have been reported through Allocated().
  CpuSet For(size_t i) const;
  // Container `i` holds `cpus` after its allocation (what it kept, or what it was given).
  void Allocated(size_t i, const CpuSet& cpus);

 private:
  std::vector<pod::ContainerRole> roles_;
  // Union of what the containers allocated so far that keep running hold.
  CpuSet earlier_running_;
  // held_after_[i]: union of what containers i+1.. held before this admission; empty when
  // no container held anything (a first admission).
  std::vector<CpuSet> held_after_;
};

}  // namespace topologyd::admission
