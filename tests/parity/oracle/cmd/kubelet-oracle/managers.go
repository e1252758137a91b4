package main

import (
	"context"
	"fmt"
	"sort"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/utils/cpuset"

	"topologyd.test/parity/oracle/caseformat"
)

// managers are kubelet's Device, CPU, Memory and Topology managers, built and started as
// pkg/kubelet/cm/container_manager_linux.go builds them, the hint providers in its order. A
// case without device pools has no device manager: with no plugin, kubelet's gives no hints
// and allocates nothing.
type managers struct {
	topology topologymanager.Manager
	device   *devicemanager.ManagerImpl
	cpu      cpumanager.Manager
	memory   memorymanager.Manager
}

// kubelet's defaults for what a case leaves out.
func withDefaults(c caseformat.Config) caseformat.Config {
	if c.CPUManagerPolicy == "" {
		c.CPUManagerPolicy = "none"
	}
	if c.TopologyManagerPolicy == "" {
		c.TopologyManagerPolicy = topologymanager.PolicyNone
	}
	if c.TopologyManagerScope == "" {
		c.TopologyManagerScope = "container"
	}
	if c.MemoryManagerPolicy == "" {
		c.MemoryManagerPolicy = "None"
	}
	return c
}

// reservation is kubelet's Node Allocatable reservation as the managers see it: with
// reservedSystemCPUs, kubelet reserves that many CPUs (cmd/kubelet/app/server.go); memory
// types reserve what reservedMemory sums to (kubelet requires the two to agree).
func reservation(c caseformat.Config, reserved cpuset.CPUSet) (v1.ResourceList, []kubeletconfig.MemoryReservation, error) {
	list := v1.ResourceList{}
	if reserved.Size() > 0 {
		list[v1.ResourceCPU] = *resource.NewQuantity(int64(reserved.Size()), resource.DecimalSI)
	}
	var memory []kubeletconfig.MemoryReservation
	for _, r := range c.ReservedMemory {
		limits := v1.ResourceList{}
		for name, text := range r.Limits {
			q, err := resource.ParseQuantity(text)
			if err != nil {
				return nil, nil, fmt.Errorf("reservedMemory: %w", err)
			}
			limits[v1.ResourceName(name)] = q
			sum := list[v1.ResourceName(name)]
			sum.Add(q)
			list[v1.ResourceName(name)] = sum
		}
		memory = append(memory, kubeletconfig.MemoryReservation{NumaNode: int32(r.NUMANode), Limits: limits})
	}
	return list, memory, nil
}

func newManagers(ctx context.Context, c caseformat.Config, info *cadvisorapi.MachineInfo, stateDir string, pods *activePods) (*managers, error) {
	c = withDefaults(c)
	if len(c.FeatureGates) > 0 {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(c.FeatureGates); err != nil {
			return nil, fmt.Errorf("featureGates: %w", err)
		}
	}
	reserved, err := cpuset.Parse(c.ReservedSystemCPUs)
	if err != nil {
		return nil, fmt.Errorf("reservedSystemCPUs: %w", err)
	}
	allocatable, reservedMemory, err := reservation(c, reserved)
	if err != nil {
		return nil, err
	}
	m := &managers{}
	m.topology, err = topologymanager.NewManager(info.Topology, c.TopologyManagerPolicy,
		c.TopologyManagerScope, c.TopologyManagerPolicyOptions)
	if err != nil {
		return nil, fmt.Errorf("topology manager: %w", err)
	}
	if len(c.Devices) > 0 {
		m.device, err = newDeviceManager(c.Devices, info, m.topology, pods)
		if err != nil {
			return nil, fmt.Errorf("device manager: %w", err)
		}
		m.topology.AddHintProvider(m.device)
	}
	m.cpu, err = cpumanager.NewManager(c.CPUManagerPolicy, c.CPUManagerPolicyOptions, reconcilePeriod,
		info, reserved, allocatable, stateDir, m.topology)
	if err != nil {
		return nil, fmt.Errorf("cpu manager: %w", err)
	}
	m.topology.AddHintProvider(m.cpu)
	m.memory, err = memorymanager.NewManager(ctx, c.MemoryManagerPolicy, info, allocatable,
		reservedMemory, stateDir, m.topology)
	if err != nil {
		return nil, fmt.Errorf("memory manager: %w", err)
	}
	m.topology.AddHintProvider(m.memory)

	if err := m.cpu.Start(pods.list, sourcesReady{}, noStatus{}, noRuntime{}, containermap.NewContainerMap()); err != nil {
		return nil, fmt.Errorf("cpu manager: %w", err)
	}
	if err := m.memory.Start(ctx, memorymanager.ActivePodsFunc(pods.list), sourcesReady{}, noStatus{},
		noRuntime{}, containermap.NewContainerMap()); err != nil {
		return nil, fmt.Errorf("memory manager: %w", err)
	}
	return m, nil
}

// numaIDs are the ids of a sorted set of NUMA nodes.
func numaIDs(ids []int) []int {
	sort.Ints(ids)
	if len(ids) == 0 {
		return nil
	}
	return ids
}
