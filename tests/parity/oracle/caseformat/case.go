// Package caseformat is the JSON of one parity case and of the decisions taken on it, shared
// by the oracle (kubelet's managers), the comparison driver and, by its documented shape,
// `topoctl replay` (docs/cli.md, `replay`).
package caseformat

import (
	"encoding/json"
)

// Case is one machine, one node configuration and a sequence of operations.
type Case struct {
	// Machine is the document of `topoctl topology --details -o json` (read as Machine),
	// kept as given so that a case passes on unchanged.
	Machine json.RawMessage `json:"machine"`
	// Kubelet holds kubelet configuration keys, spelled as in the KubeletConfiguration and in
	// topologyd's configuration file (docs/configuration.md).
	Kubelet Config `json:"kubelet"`
	// Operations run in order.
	Operations []Operation `json:"operations"`
}

// Machine is the subset of the topology document the managers read.
type Machine struct {
	Packages   int        `json:"packages"`
	Cores      int        `json:"cores"`
	CPUs       int        `json:"cpus"`
	NUMANodes  []NUMANode `json:"numa_nodes"`
	CPUDetails []CPU      `json:"cpu_details"`
}

// NUMANode is one NUMA node of the machine.
type NUMANode struct {
	ID          int         `json:"id"`
	CPUs        string      `json:"cpus"`
	MemoryBytes uint64      `json:"memory_bytes"`
	HugePages   []HugePages `json:"hugepages"`
	Distances   []uint64    `json:"distances"`
}

// HugePages is one huge page pool of a node.
type HugePages struct {
	SizeKiB uint64 `json:"size_kib"`
	Count   uint64 `json:"count"`
}

// CPU is one logical CPU with the ids kubelet's CPU topology keeps (-1: none).
type CPU struct {
	ID      int `json:"id"`
	Core    int `json:"core"`
	Package int `json:"package"`
	Die     int `json:"die"`
	NUMA    int `json:"numa"`
	L3      int `json:"l3"`
}

// Config is the node configuration of a case.
type Config struct {
	CPUManagerPolicy             string            `json:"cpuManagerPolicy,omitempty"`
	CPUManagerPolicyOptions      map[string]string `json:"cpuManagerPolicyOptions,omitempty"`
	ReservedSystemCPUs           string            `json:"reservedSystemCPUs,omitempty"`
	TopologyManagerPolicy        string            `json:"topologyManagerPolicy,omitempty"`
	TopologyManagerScope         string            `json:"topologyManagerScope,omitempty"`
	TopologyManagerPolicyOptions map[string]string `json:"topologyManagerPolicyOptions,omitempty"`
	MemoryManagerPolicy          string            `json:"memoryManagerPolicy,omitempty"`
	ReservedMemory               []MemoryReserve   `json:"reservedMemory,omitempty"`
	FeatureGates                 map[string]bool   `json:"featureGates,omitempty"`
	// Devices are topologyd's device pools (docs/configuration.md, `devices`); the oracle
	// serves each pool to kubelet's device manager from a device plugin.
	Devices []DevicePool `json:"devices,omitempty"`
}

// DevicePool is one extended resource and its devices.
type DevicePool struct {
	ResourceName string   `json:"resourceName"`
	Devices      []Device `json:"devices"`
}

// Device is one device and the NUMA nodes it is local to (none: no NUMA locality).
type Device struct {
	ID        string `json:"id"`
	NUMANodes []int  `json:"numaNodes,omitempty"`
}

// MemoryReserve is one entry of reservedMemory.
type MemoryReserve struct {
	NUMANode int               `json:"numaNode"`
	Limits   map[string]string `json:"limits"`
}

// Operation admits a pod (a Pod manifest as JSON) or deletes one by uid (a refused pod's
// deletion changes nothing).
type Operation struct {
	Admit  json.RawMessage `json:"admit,omitempty"`
	Remove string          `json:"remove,omitempty"`
}

// Result is every decision taken on a case.
type Result struct {
	// SetupError is set when the node configuration was refused on this machine; then there
	// are no decisions.
	SetupError string     `json:"setup_error,omitempty"`
	Decisions  []Decision `json:"decisions"`
}

// Decision is the outcome of one operation.
type Decision struct {
	Op       string `json:"op"` // "admit" or "remove"
	Pod      string `json:"pod"`
	Admitted bool   `json:"admitted,omitempty"`
	// Reason is kubelet's reason of a refusal (TopologyAffinityError, ...).
	Reason     string      `json:"reason,omitempty"`
	Message    string      `json:"message,omitempty"`
	Containers []Container `json:"containers,omitempty"`
	// SharedPool is the CPU manager's shared pool (default CPU set) after the operation.
	SharedPool string `json:"shared_pool"`
}

// Container is what one container of an admitted pod was given.
type Container struct {
	Name      string `json:"name"`
	Init      bool   `json:"init,omitempty"`
	Exclusive bool   `json:"exclusive,omitempty"`
	// CPUs are the exclusive CPUs; empty for a container in the shared pool.
	CPUs string `json:"cpus,omitempty"`
	// NUMAAffinity is the Topology Manager's merged hint for the container (OS ids); empty
	// when there is none.
	NUMAAffinity []int `json:"numa_affinity,omitempty"`
	// MemoryNUMA are the NUMA nodes of the container's memory blocks (Static memory manager).
	MemoryNUMA []int `json:"memory_numa,omitempty"`
	// Memory is the size of the container's memory blocks per type ("memory",
	// "hugepages-2Mi", ...), in bytes.
	Memory map[string]uint64 `json:"memory,omitempty"`
	// Devices are the device ids per extended resource, sorted.
	Devices map[string][]string `json:"devices,omitempty"`
}
