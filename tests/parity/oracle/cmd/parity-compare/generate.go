package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

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

// containerResources draws one container's resources for a pod of class qos on a machine of
// cpus CPUs: Guaranteed with whole or fractional CPUs, Burstable, or nothing.
func containerResources(r *rand.Rand, qos int, cpus int) resources {
	memory := fmt.Sprintf("%dMi", 64*(1+r.IntN(16)))
	switch qos {
	case guaranteed:
		cpu := fmt.Sprint(1 + r.IntN(max(1, cpus/3)))
		if r.IntN(5) == 0 {
			cpu = fmt.Sprintf("%dm", 100*(1+r.IntN(30)))
		}
		return resources{Limits: map[string]string{"cpu": cpu, "memory": memory}}
	case burstable:
		req := resources{Requests: map[string]string{"cpu": fmt.Sprintf("%dm", 100*(1+r.IntN(20)))}}
		if r.IntN(2) == 0 {
			req.Limits = map[string]string{"cpu": fmt.Sprint(2 + r.IntN(4)), "memory": memory}
		}
		return req
	}
	return resources{}
}

// pod draws a pod of any QoS class with up to two init containers, a sidecar and up to three
// app containers.
func pod(r *rand.Rand, uid string, cpus int) json.RawMessage {
	qos := []int{guaranteed, guaranteed, guaranteed, burstable, bestEffort}[r.IntN(5)]
	var inits, apps []container
	for i := r.IntN(3); i > 0; i-- {
		inits = append(inits, container{Name: fmt.Sprintf("init-%d", len(inits)), Resources: containerResources(r, qos, cpus)})
	}
	if r.IntN(3) == 0 {
		sidecar := container{Name: "sidecar", RestartPolicy: "Always", Resources: containerResources(r, qos, cpus)}
		inits = append(inits[:len(inits):len(inits)], sidecar)
		if len(inits) > 1 && r.IntN(2) == 0 {
			inits[0], inits[len(inits)-1] = inits[len(inits)-1], inits[0]
		}
	}
	for i := 1 + r.IntN(3); i > 0; i-- {
		apps = append(apps, container{Name: fmt.Sprintf("app-%d", len(apps)), Resources: containerResources(r, qos, cpus)})
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
func operations(r *rand.Rand, cpus int) []caseformat.Operation {
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
			manifests[uid] = pod(r, uid, cpus)
			ops = append(ops, caseformat.Operation{Admit: manifests[uid]})
			live = append(live, uid)
		}
	}
	return ops
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
	c := caseformat.Case{Machine: doc, Kubelet: config(r, m), Operations: operations(r, m.CPUs)}
	return c, mc.name, nil
}
