package main

import (
	"fmt"
	"path/filepath"
	"time"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	plugin "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/plugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"

	"topologyd.test/parity/oracle/caseformat"
)

// How long kubelet's device manager may take to list a plugin's devices after registration.
const deviceListTimeout = 10 * time.Second

// newDeviceManager builds and starts kubelet's device manager as the container manager does
// (devicemanager.NewManagerImpl on the machine's NUMA nodes, the Topology Manager as its
// affinity store) and registers one device plugin per pool: kubelet's own test plugin
// (plugin/v1beta1.Stub), serving the pool's devices with their NUMA nodes, over kubelet's
// registration socket. It returns once the manager lists every device.
//
// Where kubelet would take any of several free devices (it iterates over a Go map), it first
// asks the plugin for a preferred allocation; the plugin prefers the pool's order, the order
// topologyd takes, so that a decision is one kubelet can take and the same on every run.
//
// The manager's socket directory is fixed (/var/lib/kubelet/device-plugins) and cleaned at
// Start; the caller runs in a private mount namespace that has its own (privateMounts).
func newDeviceManager(pools []caseformat.DevicePool, info *cadvisorapi.MachineInfo,
	store topologymanager.Store, pods *activePods) (*devicemanager.ManagerImpl, error) {
	m, err := devicemanager.NewManagerImpl(info.Topology, store)
	if err != nil {
		return nil, err
	}
	if err := m.Start(devicemanager.ActivePodsFunc(pods.list), sourcesReady{},
		containermap.NewContainerMap(), sets.New[string]()); err != nil {
		return nil, err
	}
	for i, pool := range pools {
		var devs []*pluginapi.Device
		for _, d := range pool.Devices {
			dev := &pluginapi.Device{ID: d.ID, Health: pluginapi.Healthy}
			if len(d.NUMANodes) > 0 {
				dev.Topology = &pluginapi.TopologyInfo{}
				for _, n := range d.NUMANodes {
					dev.Topology.Nodes = append(dev.Topology.Nodes, &pluginapi.NUMANode{ID: int64(n)})
				}
			}
			devs = append(devs, dev)
		}
		socket := filepath.Join(pluginapi.DevicePluginPath, fmt.Sprintf("pool-%d.sock", i))
		stub := plugin.NewDevicePluginStub(devs, socket, pool.ResourceName, false, true)
		stub.SetAllocFunc(allocateNothing)
		stub.SetGetPreferredAllocFunc(preferInPoolOrder(pool))
		if err := stub.Start(); err != nil {
			return nil, fmt.Errorf("device plugin %s: %w", pool.ResourceName, err)
		}
		if err := stub.Register(pluginapi.KubeletSocket, pool.ResourceName, pluginapi.DevicePluginPath); err != nil {
			return nil, fmt.Errorf("device plugin %s: register: %w", pool.ResourceName, err)
		}
	}
	for deadline := time.Now().Add(deviceListTimeout); ; time.Sleep(10 * time.Millisecond) {
		if listsEvery(m, pools) {
			return m, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("device manager: the plugins' devices were not listed within %v", deviceListTimeout)
		}
	}
}

func listsEvery(m *devicemanager.ManagerImpl, pools []caseformat.DevicePool) bool {
	capacity, _, _ := m.GetCapacity()
	for _, pool := range pools {
		q, ok := capacity[v1.ResourceName(pool.ResourceName)]
		if !ok || q.Value() != int64(len(pool.Devices)) {
			return false
		}
	}
	return true
}

// allocateNothing answers the device manager's Allocate with one empty response per
// container, as a plugin whose devices need no mounts or environment does.
func allocateNothing(r *pluginapi.AllocateRequest, _ map[string]*pluginapi.Device) (*pluginapi.AllocateResponse, error) {
	out := &pluginapi.AllocateResponse{}
	for range r.ContainerRequests {
		out.ContainerResponses = append(out.ContainerResponses, &pluginapi.ContainerAllocateResponse{})
	}
	return out, nil
}

// preferInPoolOrder answers GetPreferredAllocation with the devices that must be included and
// then the available ones in the pool's order, up to the allocation size.
func preferInPoolOrder(pool caseformat.DevicePool) func(*pluginapi.PreferredAllocationRequest, map[string]*pluginapi.Device) (*pluginapi.PreferredAllocationResponse, error) {
	return func(r *pluginapi.PreferredAllocationRequest, _ map[string]*pluginapi.Device) (*pluginapi.PreferredAllocationResponse, error) {
		out := &pluginapi.PreferredAllocationResponse{}
		for _, req := range r.ContainerRequests {
			chosen := append([]string(nil), req.MustIncludeDeviceIDs...)
			available := sets.New(req.AvailableDeviceIDs...).Delete(chosen...)
			for _, d := range pool.Devices {
				if len(chosen) >= int(req.AllocationSize) {
					break
				}
				if available.Has(d.ID) {
					chosen = append(chosen, d.ID)
				}
			}
			out.ContainerResponses = append(out.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: chosen})
		}
		return out, nil
	}
}
