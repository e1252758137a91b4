// The differences between kubelet and topologyd that docs/admission.md documents, by name.

package main

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"topologyd.test/parity/oracle/caseformat"
)

// knownDifference is a difference between kubelet and topologyd that docs/admission.md
// ("Deliberate differences from kubelet") documents by this name. A case that shows one is
// counted under its name and compared no further (the two nodes no longer hold the same); any
// other difference fails.
type knownDifference struct {
	name string
	// matches tells whether kubelet's decision k and topologyd's decision t, which differ,
	// are this difference; earlier are kubelet's decisions before them.
	matches func(c caseformat.Case, earlier []caseformat.Decision, k, t caseformat.Decision) bool
	// Also when the two decisions compare equal: the refusals' messages (which are not
	// compared) show that the nodes no longer hold the same.
	evenWhenEqual bool
}

var knownDifferences = []knownDifference{
	{
		// docs/admission.md, "Hints": a memory request no mask can hold gets an empty hint
		// list from topologyd, which the merge refuses (TopologyAffinityError) under
		// restricted and single-numa-node and turns into a non-preferred hint otherwise, so
		// that another provider may refuse first with its own reason (SMTAlignmentError).
		// kubelet's memory manager returns no preference and its Allocate fails, unless
		// another provider's Allocate (the CPU manager's) refused first. Both refuse.
		name: "memory-refused-at-merge",
		matches: func(c caseformat.Case, _ []caseformat.Decision, k, t caseformat.Decision) bool {
			return c.Kubelet.MemoryManagerPolicy == "Static" && !k.Admitted && !t.Admitted &&
				k.Reason != t.Reason &&
				(k.Reason == "UnexpectedAdmissionError" && strings.Contains(k.Message, "[memorymanager]") ||
					t.Reason == "TopologyAffinityError" && memoryCannotBeSatisfied.MatchString(t.Message))
		},
	},
	{
		// docs/admission.md, "Memory and hugepages", Allocate step 3: a single NUMA node that
		// belongs to a multi-NUMA group is refused, as kubelet's documented rule says; its Go
		// code checks masks of several nodes only, allocates there and leaves a machine state
		// its own start-up check may refuse.
		name:          "memory-single-node-in-group",
		evenWhenEqual: true,
		matches: func(c caseformat.Case, _ []caseformat.Decision, k, t caseformat.Decision) bool {
			const rule = "preferred hint violates NUMA node allocation"
			if c.Kubelet.MemoryManagerPolicy != "Static" || t.Admitted ||
				t.Reason != "UnexpectedAdmissionError" || !strings.Contains(t.Message, rule) {
				return false
			}
			if !k.Admitted {
				// kubelet went past that container and refused the pod later, for another reason.
				return !strings.Contains(k.Message, rule)
			}
			return slices.ContainsFunc(k.Containers, func(kc caseformat.Container) bool { return len(kc.MemoryNUMA) == 1 })
		},
	},
	{
		// Under the pod scope, kubelet's memory manager sizes the pod from the memory types
		// its app containers request (getPodRequestedResources): huge pages asked only by init
		// containers or sidecars are left out of the pod's hints, and the merged hint may then
		// not hold them. topologyd counts every type any container asks.
		name: "memory-pod-request-drops-init-only-types",
		matches: func(c caseformat.Case, _ []caseformat.Decision, k, _ caseformat.Decision) bool {
			if c.Kubelet.MemoryManagerPolicy != "Static" || c.Kubelet.TopologyManagerScope != "pod" || k.Op != "admit" {
				return false
			}
			init, app := memoryTypes(c, k.Pod)
			for t := range init {
				if !app[t] {
					return true
				}
			}
			return false
		},
	},
	{
		// kubelet takes devices the pod's finished init containers held before any other, in
		// Go map order (it does not ask the device plugin there): with more such devices than
		// a container needs, its pick changes from run to run. topologyd takes pool order.
		// Both picks are among those devices.
		name: "devices-reused-arbitrarily",
		matches: func(c caseformat.Case, _ []caseformat.Decision, k, t caseformat.Decision) bool {
			j := slices.IndexFunc(k.Containers, func(kc caseformat.Container) bool {
				i := slices.IndexFunc(t.Containers, func(tc caseformat.Container) bool { return tc.Name == kc.Name })
				return i >= 0 && !maps.EqualFunc(kc.Devices, t.Containers[i].Devices, slices.Equal)
			})
			if j < 0 || len(k.Containers) != len(t.Containers) {
				return false
			}
			finished := finishedInitContainers(c, k.Pod, k.Containers[j].Name)
			reusable := map[string]map[string]bool{}
			for _, kc := range k.Containers[:j] {
				if !finished[kc.Name] {
					continue
				}
				for resource, ids := range kc.Devices {
					if reusable[resource] == nil {
						reusable[resource] = map[string]bool{}
					}
					for _, id := range ids {
						reusable[resource][id] = true
					}
				}
			}
			kd, td := k.Containers[j].Devices, t.Containers[j].Devices
			if !maps.EqualFunc(kd, td, func(a, b []string) bool { return len(a) == len(b) }) {
				return false
			}
			for resource, ids := range kd {
				for _, id := range append(slices.Clone(ids), td[resource]...) {
					if !reusable[resource][id] {
						return false
					}
				}
			}
			return true
		},
	},
	{
		// A pod deleted and admitted again under the same uid: kubelet's managers may still
		// hold parts of its earlier life and use them — the CPU manager's reuse bookkeeping of
		// its init containers (cleared only when another pod's container gets exclusive
		// CPUs), the memory manager's (cleared when another pod's memory is pinned), and the
		// device manager's record of its devices (freed when another pod's devices are
		// allocated after the deletion, and only for pods no longer active, which the new
		// life is). So: the earlier life held a kind of resource that no other pod was given
		// since. topologyd starts the new life afresh.
		// Recognised at the re-admission even when its own decision agrees: kubelet's
		// state afterwards (what it reserved, less what it counted as reused) is not what
		// topologyd's is, and a later pod shows it.
		name:          "readmission-reuses-earlier-life",
		evenWhenEqual: true,
		matches: func(c caseformat.Case, earlier []caseformat.Decision, k, _ caseformat.Decision) bool {
			if k.Op != "admit" {
				return false
			}
			removed := false
			// What other pods were given since the earlier life's admission, and since its
			// deletion (the device record lingers unless a device allocation follows it).
			var sinceAdmission, sinceRemoval pinnedKinds
			for j := len(earlier) - 1; j >= 0; j-- {
				e := earlier[j]
				switch {
				case e.Op == "remove" && e.Pod == k.Pod:
					removed = true
				case e.Op == "admit" && e.Pod != k.Pod:
					sinceAdmission = sinceAdmission.union(pinnedBy(c, e))
					if !removed {
						sinceRemoval = sinceRemoval.union(pinnedBy(c, e))
					}
				case e.Op == "admit" && e.Pod == k.Pod && e.Admitted:
					held := pinnedBy(c, e)
					return removed && (held.cpus && !sinceAdmission.cpus ||
						held.memory && !sinceAdmission.memory || held.devices && !sinceRemoval.devices)
				}
			}
			return false
		},
	},
}

// pinnedKinds are the kinds of resources a decision pinned.
type pinnedKinds struct{ cpus, memory, devices bool }

func (a pinnedKinds) union(b pinnedKinds) pinnedKinds {
	return pinnedKinds{a.cpus || b.cpus, a.memory || b.memory, a.devices || b.devices}
}

// pinnedBy: what an admission pinned. For a refused pod, what its containers allocated before
// the refusal may have pinned: exclusive CPUs and memory when it is Guaranteed, devices when it
// asks for any.
func pinnedBy(c caseformat.Case, d caseformat.Decision) pinnedKinds {
	var p pinnedKinds
	if !d.Admitted {
		pod, _ := podManifest(c, d.Pod)
		guaranteed := true
		for _, ctr := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			r := ctr.Resources
			for _, name := range []string{"cpu", "memory"} {
				if r.Limits[name] == "" || (r.Requests[name] != "" && r.Requests[name] != r.Limits[name]) {
					guaranteed = false
				}
			}
			for name := range r.Limits {
				p.devices = p.devices || strings.Contains(name, "/")
			}
		}
		p.cpus, p.memory = guaranteed, guaranteed
		return p
	}
	for _, ctr := range d.Containers {
		p = p.union(pinnedKinds{ctr.Exclusive, len(ctr.MemoryNUMA) > 0, len(ctr.Devices) > 0})
	}
	return p
}

// topologyd's merge refusal naming a memory type no mask can hold.
var memoryCannotBeSatisfied = regexp.MustCompile(`(^|; )(memory|hugepages-[0-9A-Za-z]+): cannot be satisfied`)

// reservesMoreThanNodeHas: a reservedMemory entry reserves more huge pages than the node's
// pool holds, or more memory than the node has besides its huge page pools.
func reservesMoreThanNodeHas(c caseformat.Case) bool {
	var m caseformat.Machine
	if json.Unmarshal(c.Machine, &m) != nil {
		return false
	}
	for _, r := range c.Kubelet.ReservedMemory {
		i := slices.IndexFunc(m.NUMANodes, func(n caseformat.NUMANode) bool { return n.ID == r.NUMANode })
		if i < 0 {
			continue
		}
		node := m.NUMANodes[i]
		pools := map[string]uint64{}
		var pooled uint64
		for _, p := range node.HugePages {
			bytes := p.Count * p.SizeKiB * 1024
			pools["hugepages-"+resource.NewQuantity(int64(p.SizeKiB*1024), resource.BinarySI).String()] += bytes
			pooled += bytes
		}
		for name, text := range r.Limits {
			q, err := resource.ParseQuantity(text)
			if err != nil {
				continue
			}
			if (name == "memory" && uint64(q.Value())+pooled > node.MemoryBytes) ||
				(name != "memory" && uint64(q.Value()) > pools[name]) {
				return true
			}
		}
	}
	return false
}
