package main

import (
	"encoding/json"
	"fmt"
	"sort"

	cadvisorapi "github.com/google/cadvisor/info/v1"

	"topologyd.test/parity/oracle/caseformat"
)

// machineInfo is what cAdvisor would report for the machine: one Node per NUMA node (CPU-less
// nodes included, as sysfs lists them), each with its cores, memory, huge pages and distances.
func machineInfo(raw json.RawMessage) (*cadvisorapi.MachineInfo, error) {
	var m caseformat.Machine
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("machine: %w", err)
	}
	if len(m.CPUDetails) != m.CPUs {
		return nil, fmt.Errorf("machine: %d cpu_details for %d CPUs (give topoctl topology --details)",
			len(m.CPUDetails), m.CPUs)
	}
	type coreKey struct{ numa, pkg, core int }
	cores := map[coreKey]*cadvisorapi.Core{}
	for _, cpu := range m.CPUDetails {
		if cpu.NUMA < 0 {
			return nil, fmt.Errorf("machine: CPU %d is in no NUMA node, which cAdvisor cannot report", cpu.ID)
		}
		key := coreKey{cpu.NUMA, cpu.Package, cpu.Core}
		c, ok := cores[key]
		if !ok {
			c = &cadvisorapi.Core{Id: cpu.Core, SocketID: cpu.Package}
			if cpu.L3 >= 0 {
				c.UncoreCaches = []cadvisorapi.Cache{{Id: cpu.L3, Level: 3, Type: "Unified"}}
			}
			cores[key] = c
		}
		c.Threads = append(c.Threads, cpu.ID)
	}
	info := &cadvisorapi.MachineInfo{NumCores: m.CPUs, NumSockets: m.Packages, NumPhysicalCores: m.Cores}
	for _, node := range m.NUMANodes {
		n := cadvisorapi.Node{Id: node.ID, Memory: node.MemoryBytes, Distances: node.Distances}
		for _, pages := range node.HugePages {
			n.HugePages = append(n.HugePages, cadvisorapi.HugePagesInfo{PageSize: pages.SizeKiB, NumPages: pages.Count})
		}
		for key, c := range cores {
			if key.numa == node.ID {
				sort.Ints(c.Threads)
				n.Cores = append(n.Cores, *c)
			}
		}
		sort.Slice(n.Cores, func(i, j int) bool { return n.Cores[i].Threads[0] < n.Cores[j].Threads[0] })
		info.Topology = append(info.Topology, n)
		info.MemoryCapacity += node.MemoryBytes
	}
	return info, nil
}
