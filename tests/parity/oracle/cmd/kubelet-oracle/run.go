package main

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"topologyd.test/parity/oracle/caseformat"
)

// oracle runs a case's operations through kubelet's managers.
type oracle struct {
	ctx    context.Context
	m      *managers
	pods   *activePods
	static bool
}

// withRequestDefaults copies a missing request from its limit, as the API server does before
// kubelet sees a pod.
func withRequestDefaults(pod *v1.Pod) {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			r := &list[i].Resources
			for name, limit := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = v1.ResourceList{}
					}
					r.Requests[name] = limit
				}
			}
		}
	}
}

func containerID(pod *v1.Pod, name string) string { return string(pod.UID) + "/" + name }

// sharedPool is where containers without exclusive CPUs run: the static policy's default
// set, every CPU under the none policy.
func (o *oracle) sharedPool() string {
	if o.static {
		return o.m.cpu.State().GetDefaultCPUSet().String()
	}
	return o.m.cpu.GetAllCPUs().String()
}

// admit is kubelet's HandlePodAdditions for one pod: the pod becomes active, the Topology
// Manager's admit handler runs (hints, merge, Allocate of every provider, container by
// container or for the pod), and an admitted pod's containers are created (AddContainer).
// A refused pod stops being active; what its earlier containers were given is reclaimed by
// the managers' removeStaleState at their next call, as in kubelet.
func (o *oracle) admit(raw json.RawMessage) (caseformat.Decision, error) {
	pod := &v1.Pod{}
	if err := json.Unmarshal(raw, pod); err != nil {
		return caseformat.Decision{}, fmt.Errorf("admit: %w", err)
	}
	withRequestDefaults(pod)
	d := caseformat.Decision{Op: "admit", Pod: string(pod.UID)}
	o.pods.add(pod)
	result := o.m.topology.Admit(&lifecycle.PodAdmitAttributes{Pod: pod})
	if !result.Admit {
		o.pods.remove(pod.UID)
		o.reclaimStale()
		d.Reason, d.Message = result.Reason, result.Message
		d.SharedPool = o.sharedPool()
		return d, nil
	}
	d.Admitted = true
	for i, c := range append(append([]v1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		id := containerID(pod, c.Name)
		o.m.cpu.AddContainer(pod, &c, id)
		o.m.memory.AddContainer(o.ctx, pod, &c, id)
		o.m.topology.AddContainer(pod, &c, id)
		out := caseformat.Container{Name: c.Name, Init: i < len(pod.Spec.InitContainers)}
		if cpus := o.m.cpu.GetExclusiveCPUs(string(pod.UID), c.Name); cpus.Size() > 0 {
			out.Exclusive, out.CPUs = true, cpus.String()
		}
		if hint := o.m.topology.GetAffinity(string(pod.UID), c.Name); hint.NUMANodeAffinity != nil {
			out.NUMAAffinity = numaIDs(hint.NUMANodeAffinity.GetBits())
		}
		if nodes := o.m.memory.GetMemoryNUMANodes(o.ctx, pod, &c); nodes.Len() > 0 {
			out.MemoryNUMA = numaIDs(nodes.UnsortedList())
		}
		for _, block := range o.m.memory.GetMemory(o.ctx, string(pod.UID), c.Name) {
			if out.Memory == nil {
				out.Memory = map[string]uint64{}
			}
			out.Memory[string(block.Type)] += block.Size
		}
		if o.m.device != nil {
			for resource, devices := range o.m.device.GetDevices(string(pod.UID), c.Name) {
				if out.Devices == nil {
					out.Devices = map[string][]string{}
				}
				out.Devices[resource] = sets.List(sets.KeySet(devices))
			}
		}
		d.Containers = append(d.Containers, out)
	}
	d.SharedPool = o.sharedPool()
	return d, nil
}

// reclaimStale makes the CPU and Memory managers drop what a refused pod's earlier containers
// were given. kubelet does so at the managers' next call (their removeStaleState, also run by
// the CPU manager's reconcile loop); calling them here for a pod without containers makes the
// shared pool reported after a refusal the one every later decision starts from.
func (o *oracle) reclaimStale() {
	empty := &v1.Pod{}
	o.m.cpu.GetPodTopologyHints(empty)
	o.m.memory.GetPodTopologyHints(empty)
}

// remove deletes a pod: it stops being active and each of its containers is removed from
// every manager (kubelet's container removal). A pod that was refused holds nothing.
func (o *oracle) remove(uid string) (caseformat.Decision, error) {
	pod := o.pods.remove(types.UID(uid))
	if pod == nil {
		return caseformat.Decision{Op: "remove", Pod: uid, SharedPool: o.sharedPool()}, nil
	}
	for _, c := range append(append([]v1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		id := containerID(pod, c.Name)
		if err := o.m.cpu.RemoveContainer(id); err != nil {
			return caseformat.Decision{}, fmt.Errorf("remove %s: cpu manager: %w", id, err)
		}
		if err := o.m.memory.RemoveContainer(o.ctx, id); err != nil {
			return caseformat.Decision{}, fmt.Errorf("remove %s: memory manager: %w", id, err)
		}
		if err := o.m.topology.RemoveContainer(id); err != nil {
			return caseformat.Decision{}, fmt.Errorf("remove %s: topology manager: %w", id, err)
		}
	}
	return caseformat.Decision{Op: "remove", Pod: uid, SharedPool: o.sharedPool()}, nil
}
