package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"topologyd.test/parity/oracle/caseformat"
)

// The static policy's options (kubelet v1.34), with whether they need the alpha gate.
var cpuOptions = []struct {
	name  string
	alpha bool
}{
	{"full-pcpus-only", false},
	{"distribute-cpus-across-numa", false},
	{"align-by-socket", true},
	{"distribute-cpus-across-cores", true},
	{"strict-cpu-reservation", false},
	{"prefer-align-cpus-by-uncorecache", false},
}

var topologyPolicies = []string{"none", "best-effort", "restricted", "single-numa-node"}

// config draws a node configuration. Incompatible option pairs are drawn too: both sides must
// refuse them.
func config(r *rand.Rand, m caseformat.Machine) caseformat.Config {
	c := caseformat.Config{
		TopologyManagerPolicy: topologyPolicies[r.IntN(len(topologyPolicies))],
		TopologyManagerScope:  []string{"container", "pod"}[r.IntN(2)],
	}
	if r.IntN(5) == 0 {
		c.CPUManagerPolicy = "none"
	} else {
		c.CPUManagerPolicy = "static"
		c.ReservedSystemCPUs = reservedCPUs(r, m)
		c.CPUManagerPolicyOptions = map[string]string{}
		for _, o := range cpuOptions {
			if r.IntN(4) == 0 {
				c.CPUManagerPolicyOptions[o.name] = "true"
				if o.alpha {
					c.FeatureGates = map[string]bool{"CPUManagerPolicyAlphaOptions": true}
				}
			}
		}
	}
	// kubelet indexes a node's distances by NUMA id, not by position: with sparse ids its
	// merge under prefer-closest-numa-nodes reads past the row and panics.
	if r.IntN(4) == 0 && denseNUMAIDs(m) {
		c.TopologyManagerPolicyOptions = map[string]string{"prefer-closest-numa-nodes": "true"}
	}
	if len(m.NUMANodes) > 8 {
		if c.TopologyManagerPolicyOptions == nil {
			c.TopologyManagerPolicyOptions = map[string]string{}
		}
		c.TopologyManagerPolicyOptions["max-allowable-numa-nodes"] = fmt.Sprint(len(m.NUMANodes))
	}
	return c
}

func denseNUMAIDs(m caseformat.Machine) bool {
	for i, node := range m.NUMANodes {
		if node.ID != i {
			return false
		}
	}
	return true
}

// reservedCPUs: one to three CPUs, the first ones or drawn anywhere.
func reservedCPUs(r *rand.Rand, m caseformat.Machine) string {
	n := 1 + r.IntN(3)
	ids := map[int]bool{}
	for i := 0; len(ids) < n && i < len(m.CPUDetails); i++ {
		if r.IntN(2) == 0 {
			ids[m.CPUDetails[i].ID] = true
		} else {
			ids[m.CPUDetails[r.IntN(len(m.CPUDetails))].ID] = true
		}
	}
	list := ""
	for _, cpu := range m.CPUDetails {
		if ids[cpu.ID] {
			if list != "" {
				list += ","
			}
			list += fmt.Sprint(cpu.ID)
		}
	}
	return list
}

type resources struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

type container struct {
	Name          string    `json:"name"`
	RestartPolicy string    `json:"restartPolicy,omitempty"`
	Resources     resources `json:"resources"`
}

// qos classes of generated pods.
const (
	guaranteed = iota
	burstable
	bestEffort
)

// shape is what the pods of a case may ask for: CPUs up to a third of the machine's, huge
// pages when the Static memory manager runs, devices of the node's pools.
type shape struct {
	cpus      int
	hugepages bool
	devices   []string
}

// containerResources draws one container's resources for a pod of class qos: Guaranteed with
// whole or fractional CPUs, Burstable, or nothing; sometimes huge pages and devices.
func containerResources(r *rand.Rand, qos int, s shape) resources {
	memory := fmt.Sprintf("%dMi", 64*(1+r.IntN(16)))
	var out resources
	switch qos {
	case guaranteed:
		cpu := fmt.Sprint(1 + r.IntN(max(1, s.cpus/3)))
		if r.IntN(5) == 0 {
			cpu = fmt.Sprintf("%dm", 100*(1+r.IntN(30)))
		}
		out = resources{Limits: map[string]string{"cpu": cpu, "memory": memory}}
		if s.hugepages && r.IntN(3) == 0 {
			out.Limits["hugepages-2Mi"] = fmt.Sprintf("%dMi", 2*(1+r.IntN(64)))
		}
	case burstable:
		out = resources{Requests: map[string]string{"cpu": fmt.Sprintf("%dm", 100*(1+r.IntN(20)))}}
		if r.IntN(2) == 0 {
			out.Limits = map[string]string{"cpu": fmt.Sprint(2 + r.IntN(4)), "memory": memory}
		}
	}
	if len(s.devices) > 0 && qos != bestEffort && r.IntN(3) == 0 {
		// An extended resource is asked as a limit; its request is the same.
		if out.Limits == nil {
			out.Limits = map[string]string{}
		}
		out.Limits[s.devices[r.IntN(len(s.devices))]] = fmt.Sprint(1 + r.IntN(3))
	}
	return out
}

// pod draws a pod of any QoS class with up to two init containers, a sidecar and up to three
// app containers.
func pod(r *rand.Rand, uid string, s shape) json.RawMessage {
	qos := []int{guaranteed, guaranteed, guaranteed, burstable, bestEffort}[r.IntN(5)]
	var inits, apps []container
	for i := r.IntN(3); i > 0; i-- {
		inits = append(inits, container{Name: fmt.Sprintf("init-%d", len(inits)), Resources: containerResources(r, qos, s)})
	}
	if r.IntN(3) == 0 {
		sidecar := container{Name: "sidecar", RestartPolicy: "Always", Resources: containerResources(r, qos, s)}
		inits = append(inits[:len(inits):len(inits)], sidecar)
		if len(inits) > 1 && r.IntN(2) == 0 {
			inits[0], inits[len(inits)-1] = inits[len(inits)-1], inits[0]
		}
	}
	for i := 1 + r.IntN(3); i > 0; i-- {
		apps = append(apps, container{Name: fmt.Sprintf("app-%d", len(apps)), Resources: containerResources(r, qos, s)})
	}
	if qos == burstable && r.IntN(2) == 0 {
		// A Guaranteed-looking container in a Burstable pod: no exclusive CPUs for it.
		apps[0].Resources = resources{Limits: map[string]string{"cpu": "2", "memory": "128Mi"}}
	}
	manifest := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"uid": uid, "name": uid, "namespace": "parity"},
		"spec":     map[string]any{"initContainers": inits, "containers": apps},
	}
	out, err := json.Marshal(manifest)
	if err != nil {
		panic(err)
	}
	return out
}

// operations draws arrivals and deletions: a deletion names an earlier pod (refused ones
// included), and a deleted pod may arrive again with the same uid.
func operations(r *rand.Rand, s shape) []caseformat.Operation {
	var ops []caseformat.Operation
	var live, gone []string
	manifests := map[string]json.RawMessage{}
	for n := 3 + r.IntN(10); n > 0; n-- {
		switch k := r.IntN(10); {
		case k < 3 && len(live) > 0:
			i := r.IntN(len(live))
			ops = append(ops, caseformat.Operation{Remove: live[i]})
			gone = append(gone, live[i])
			live = append(live[:i], live[i+1:]...)
		case k == 3 && len(gone) > 0:
			i := r.IntN(len(gone))
			ops = append(ops, caseformat.Operation{Admit: manifests[gone[i]]})
			live = append(live, gone[i])
			gone = append(gone[:i], gone[i+1:]...)
		default:
			uid := fmt.Sprintf("pod-%d", len(manifests))
			manifests[uid] = pod(r, uid, s)
			ops = append(ops, caseformat.Operation{Admit: manifests[uid]})
			live = append(live, uid)
		}
	}
	return ops
}

// memory turns the Static memory manager on for a third of the cases: memory reserved on
// node 0 and sometimes on others (kubelet requires some), and 2 MiB huge pages on each node,
// some of them reserved too. The huge pages are written into the machine document.
func memory(r *rand.Rand, c *caseformat.Config, doc map[string]any) {
	if r.IntN(3) != 0 {
		return
	}
	c.MemoryManagerPolicy = "Static"
	nodes, _ := doc["numa_nodes"].([]any)
	for i, n := range nodes {
		node := n.(map[string]any)
		bytes := node["memory_bytes"].(float64)
		pages := 0
		if r.IntN(3) != 0 {
			pages = min(64*(1+r.IntN(8)), int(bytes/2/(2<<20)))
		}
		node["hugepages"] = []any{map[string]any{"size_kib": 2048, "count": pages}}
		if i > 0 && r.IntN(3) != 0 {
			continue
		}
		limits := map[string]string{"memory": fmt.Sprintf("%dMi", 64*(1+r.IntN(8)))}
		if pages > 0 && r.IntN(4) == 0 {
			limits["hugepages-2Mi"] = fmt.Sprintf("%dMi", 2*(1+r.IntN(min(pages, 8))))
		}
		c.ReservedMemory = append(c.ReservedMemory, caseformat.MemoryReserve{NUMANode: int(node["id"].(float64)), Limits: limits})
	}
}

// devices gives a third of the cases one or two device pools of up to eight devices. In a
// pool either every device is local to one NUMA node or two, or none is; devices of the same
// NUMA nodes are listed together. (kubelet asks the device plugin which device it prefers
// among unaligned ones and ones without NUMA locality together, where topologyd takes the
// unaligned ones first; and the oracle's plugin prefers the pool's order, which then decides
// which NUMA nodes the devices come from only when equal devices sit together.)
func devices(r *rand.Rand, c *caseformat.Config, m caseformat.Machine) []string {
	if r.IntN(3) != 0 {
		return nil
	}
	var names []string
	for p := 1 + r.IntN(2); p > 0; p-- {
		pool := caseformat.DevicePool{ResourceName: fmt.Sprintf("example.com/dev-%d", len(c.Devices))}
		local := r.IntN(5) != 0
		for d := 1 + r.IntN(8); d > 0; d-- {
			var numa []int
			switch {
			case !local:
			case r.IntN(6) == 0 && len(m.NUMANodes) > 1:
				first := r.IntN(len(m.NUMANodes) - 1)
				numa = []int{m.NUMANodes[first].ID, m.NUMANodes[first+1].ID}
			default:
				numa = []int{m.NUMANodes[r.IntN(len(m.NUMANodes))].ID}
			}
			pool.Devices = append(pool.Devices, caseformat.Device{NUMANodes: numa})
		}
		slices.SortStableFunc(pool.Devices, func(a, b caseformat.Device) int { return slices.Compare(a.NUMANodes, b.NUMANodes) })
		for i := range pool.Devices {
			pool.Devices[i].ID = fmt.Sprintf("dev-%d-%d", len(c.Devices), i)
		}
		c.Devices = append(c.Devices, pool)
		names = append(names, pool.ResourceName)
	}
	return names
}

// generate draws case number index of seed.
func generate(ms *machines, seed, index uint64) (caseformat.Case, string, error) {
	r := rand.New(rand.NewPCG(seed, index))
	mc, err := ms.pick(r)
	if err != nil {
		return caseformat.Case{}, "", err
	}
	doc, err := withDistances(mc.document)
	if err != nil {
		return caseformat.Case{}, "", err
	}
	var m caseformat.Machine
	if err := json.Unmarshal(doc, &m); err != nil {
		return caseformat.Case{}, "", err
	}
	c := caseformat.Case{Kubelet: config(r, m)}
	var fields map[string]any
	if err := json.Unmarshal(doc, &fields); err != nil {
		return caseformat.Case{}, "", err
	}
	memory(r, &c.Kubelet, fields)
	if c.Machine, err = json.Marshal(fields); err != nil {
		return caseformat.Case{}, "", err
	}
	s := shape{cpus: m.CPUs, hugepages: c.Kubelet.MemoryManagerPolicy == "Static", devices: devices(r, &c.Kubelet, m)}
	withinMergeBudget(&c.Kubelet, &s, len(m.NUMANodes))
	c.Operations = operations(r, s)
	return c, mc.name, nil
}

// kubelet's merge walks every combination of one hint per resource: up to 2^N - 1 hints per
// resource on N NUMA nodes. Cases stay below this many combinations, so that kubelet finishes.
const mergeBudget = 2e7

// withinMergeBudget drops device pools, then huge pages, then the Static memory manager until
// the resources a pod may ask for (CPUs, memory, huge pages, each pool) fit mergeBudget.
func withinMergeBudget(c *caseformat.Config, s *shape, numa int) {
	combinations := func() float64 {
		lists := 1 + len(s.devices)
		if c.MemoryManagerPolicy == "Static" {
			lists++
		}
		if s.hugepages {
			lists++
		}
		return math.Pow(math.Exp2(float64(numa))-1, float64(lists))
	}
	for len(s.devices) > 0 && combinations() > mergeBudget {
		s.devices = s.devices[:len(s.devices)-1]
		c.Devices = c.Devices[:len(c.Devices)-1]
	}
	if s.hugepages && combinations() > mergeBudget {
		s.hugepages = false
	}
	if c.MemoryManagerPolicy == "Static" && combinations() > mergeBudget {
		c.MemoryManagerPolicy, c.ReservedMemory = "", nil
	}
}
