package plugin

import (
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"

	pb "topologyd.local/nri/internal/topologydv1"
)

func resourcesWithQuota(quota int64) *api.LinuxResources {
	return &api.LinuxResources{Cpu: &api.LinuxCPU{Quota: api.Int64(quota), Period: api.UInt64(100000),
		Shares: api.UInt64(1024)}, Memory: &api.LinuxMemory{Limit: api.Int64(64 << 20)}}
}

func TestAnExclusiveContainerLosesTheQuotaKubeletSentAndOnlyThat(t *testing.T) {
	exclusive := placementOf(&pb.ContainerAllocation{Cpus: "2-3", MemoryNuma: []int32{0, 1}, CpuQuotaUnlimited: true})
	a := adjustment(exclusive, resourcesWithQuota(200000))
	cpu := a.GetLinux().GetResources().GetCpu()
	if cpu.GetCpus() != "2-3" || cpu.GetMems() != "0,1" || cpu.GetQuota().GetValue() != -1 {
		t.Errorf("adjustment %v", a)
	}
	// No quota sent (a BestEffort container, or kubelet's quota off): none written.
	if q := adjustment(exclusive, &api.LinuxResources{}).GetLinux().GetResources().GetCpu().GetQuota(); q != nil {
		t.Errorf("quota %v", q)
	}
	// The shared pool keeps kubelet's quota, and memory is not pinned without memory nodes.
	shared := adjustment(placementOf(&pb.ContainerAllocation{Cpus: "0-1"}), resourcesWithQuota(50000))
	if cpu := shared.GetLinux().GetResources().GetCpu(); cpu.GetQuota() != nil || cpu.GetMems() != "" {
		t.Errorf("shared adjustment %v", shared)
	}
}

func TestTheContainerGoesToTopologydAsTheCriShowsIt(t *testing.T) {
	ctr := &api.Container{Name: "app", Linux: &api.LinuxContainer{
		Resources:   resourcesWithQuota(200000),
		OomScoreAdj: api.Int(-997),
	}}
	ctr.Linux.Resources.HugepageLimits = []*api.HugepageLimit{{PageSize: "2MB", Limit: 4 << 20}}
	got := runtimeContainer(ctr).GetResources()
	want := &pb.LinuxResources{CpuPeriod: 100000, CpuQuota: 200000, CpuShares: 1024,
		MemoryLimitInBytes: 64 << 20, OomScoreAdj: -997,
		HugepageLimits: []*pb.HugepageLimit{{PageSize: "2MB", Limit: 4 << 20}}}
	if got.String() != want.String() {
		t.Errorf("got %v, want %v", got, want)
	}
	// Nothing set: zeros, as CRI's unset fields read.
	if empty := runtimeContainer(&api.Container{Name: "x"}).GetResources(); empty.String() != "" {
		t.Errorf("got %v", empty)
	}
}

func TestOnlyContainersWithKnownResourcesGoIntoTheRuntimePod(t *testing.T) {
	pod := &api.PodSandbox{Uid: "u", Namespace: "ns", Name: "p",
		Linux: &api.LinuxPodSandbox{CgroupParent: "/kubepods/podu"}}
	got := runtimePod(pod, []*record{{name: "a", resources: resourcesWithQuota(100000)}, {name: "b"}})
	if got.GetCgroupParent() != "/kubepods/podu" || len(got.GetContainers()) != 1 || got.GetContainers()[0].GetName() != "a" {
		t.Errorf("got %v", got)
	}
}

func TestWhileTopologydIsDownOnlyBurstableAndBestEffortPodsMayRunUnpinned(t *testing.T) {
	for parent, want := range map[string]bool{
		"/kubepods/podu":                                   true,
		"/kubepods/burstable/podu":                         false,
		"kubepods-besteffort-podu.slice":                   false,
		"/custom":                                          true,
		"kubepods.slice/kubepods-pod1.slice":               true,
		"/kubepods.slice/kubepods-burstable.slice/x.slice": false,
	} {
		pod := &api.PodSandbox{Linux: &api.LinuxPodSandbox{CgroupParent: parent}}
		if got := needsPlacement(pod); got != want {
			t.Errorf("%s: needsPlacement = %v", parent, got)
		}
	}
	annotated := &api.PodSandbox{Annotations: map[string]string{"topologyd.io/resources": "{}"},
		Linux: &api.LinuxPodSandbox{CgroupParent: "/kubepods/burstable/podu"}}
	if !needsPlacement(annotated) {
		t.Error("an annotated pod may ask for exclusive CPUs or devices")
	}
}

func TestARefusalReadsAsTheShimsDoes(t *testing.T) {
	err := refusal("OutOfcpu", "not enough")
	if !strings.HasPrefix(err.Error(), "topologyd: OutOfcpu: not enough") {
		t.Error(err)
	}
}
