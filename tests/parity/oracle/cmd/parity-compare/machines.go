package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sort"

	"topologyd.test/parity/oracle/caseformat"
)

// machine is one machine a case may run on: its document (`topoctl topology --details -o
// json`) and where it came from.
type machine struct {
	name     string
	document json.RawMessage
	numa     int
}

// machines reads the recorded XML files of dir (none when dir is empty) and synthetic shapes
// from topoctl. A machine kubelet cannot be given (a CPU in no NUMA node, which cAdvisor
// cannot report; a NUMA id above 63, which kubelet's bitmask cannot hold) or whose merges kubelet cannot finish (more than maxNUMA nodes) is left out.
type machines struct {
	topoctl string
	maxNUMA int
	corpus  []machine
	cache   map[string]machine
}

func loadMachine(topoctl, name string, args ...string) (machine, error) {
	out, err := exec.Command(topoctl, append([]string{"topology", "--details", "-o", "json"}, args...)...).Output()
	if err != nil {
		return machine{}, fmt.Errorf("topoctl topology %v: %w", args, err)
	}
	var m caseformat.Machine
	if err := json.Unmarshal(out, &m); err != nil {
		return machine{}, fmt.Errorf("topoctl topology %v: %w", args, err)
	}
	for _, cpu := range m.CPUDetails {
		if cpu.NUMA < 0 {
			return machine{}, errUnusable
		}
	}
	for _, node := range m.NUMANodes {
		if node.ID > 63 {
			// kubelet's NUMA bitmask holds ids 0-63: its merge panics on such a node.
			return machine{}, errUnusable
		}
	}
	return machine{name: name, document: out, numa: len(m.NUMANodes)}, nil
}

var errUnusable = fmt.Errorf("a machine kubelet cannot be given")

func newMachines(topoctl, dir string, maxNUMA int) (*machines, error) {
	ms := &machines{topoctl: topoctl, maxNUMA: maxNUMA, cache: map[string]machine{}}
	if dir == "" {
		return ms, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.xml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	for _, f := range files {
		m, err := loadMachine(topoctl, filepath.Base(f), "--input", f)
		if err == errUnusable {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m.numa <= maxNUMA {
			ms.corpus = append(ms.corpus, m)
		}
	}
	if len(ms.corpus) == 0 {
		return nil, fmt.Errorf("no usable machine in %s", dir)
	}
	return ms, nil
}

// synthetic is an hwloc synthetic shape: packages, NUMA nodes per package, L3 groups per
// NUMA node, cores per L3 group, CPUs per core.
func (ms *machines) synthetic(r *rand.Rand) (machine, error) {
	packages := []int{1, 1, 2, 2, 4}[r.IntN(5)]
	numa := []int{1, 1, 2}[r.IntN(3)]
	for packages*numa > ms.maxNUMA {
		numa = 1
		packages = 2
	}
	desc := fmt.Sprintf("pack:%d numa:%d", packages, numa)
	if r.IntN(3) == 0 {
		desc += fmt.Sprintf(" l3:%d", 1+r.IntN(3))
	}
	desc += fmt.Sprintf(" core:%d pu:%d", 2+r.IntN(5), []int{1, 2, 2, 4}[r.IntN(4)])
	if m, ok := ms.cache[desc]; ok {
		return m, nil
	}
	m, err := loadMachine(ms.topoctl, desc, "--synthetic", desc)
	if err != nil {
		return machine{}, err
	}
	ms.cache[desc] = m
	return m, nil
}

// pick chooses a machine: from the corpus half of the time when there is one.
func (ms *machines) pick(r *rand.Rand) (machine, error) {
	if len(ms.corpus) > 0 && r.IntN(2) == 0 {
		return ms.corpus[r.IntN(len(ms.corpus))], nil
	}
	return ms.synthetic(r)
}

// withDistances gives a machine without NUMA distances the usual ones (10 local, 20 within a
// package, 32 across packages), so that prefer-closest-numa-nodes has something to read.
func withDistances(doc json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	nodes, _ := m["numa_nodes"].([]any)
	details, _ := m["cpu_details"].([]any)
	pkg := map[float64]float64{}
	for _, d := range details {
		cpu := d.(map[string]any)
		pkg[cpu["numa"].(float64)] = cpu["package"].(float64)
	}
	for _, n := range nodes {
		node := n.(map[string]any)
		if row, _ := node["distances"].([]any); len(row) > 0 {
			return doc, nil
		}
		var row []any
		for _, o := range nodes {
			other := o.(map[string]any)
			switch {
			case other["id"] == node["id"]:
				row = append(row, 10)
			case pkg[other["id"].(float64)] == pkg[node["id"].(float64)]:
				row = append(row, 20)
			default:
				row = append(row, 32)
			}
		}
		node["distances"] = row
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return out, nil
}
