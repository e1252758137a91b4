package plugin

import (
	"fmt"
	"strings"

	"github.com/containerd/nri/pkg/api"

	pb "topologyd.local/nri/internal/topologydv1"
)

// placement is what topologyd pins one container to.
type placement struct {
	cpus           string
	mems           string // empty: topologyd does not pin memory
	quotaUnlimited bool   // kubelet's static policy would run it without a CFS quota
	containerID    string // the runtime instance topologyd has bound it to
}

func placementOf(c *pb.ContainerAllocation) placement {
	mems := make([]string, 0, len(c.GetMemoryNuma()))
	for _, n := range c.GetMemoryNuma() {
		mems = append(mems, fmt.Sprint(n))
	}
	return placement{cpus: c.GetCpus(), mems: strings.Join(mems, ","),
		quotaUnlimited: c.GetCpuQuotaUnlimited(), containerID: c.GetContainerId()}
}

// linuxResources is NRI's view of a container's resources as topologyd's API carries it.
func linuxResources(r *api.LinuxResources) *pb.LinuxResources {
	out := &pb.LinuxResources{}
	if cpu := r.GetCpu(); cpu != nil {
		out.CpuPeriod = int64(cpu.GetPeriod().GetValue())
		out.CpuQuota = cpu.GetQuota().GetValue()
		out.CpuShares = int64(cpu.GetShares().GetValue())
	}
	out.MemoryLimitInBytes = r.GetMemory().GetLimit().GetValue()
	for _, h := range r.GetHugepageLimits() {
		out.HugepageLimits = append(out.HugepageLimits, &pb.HugepageLimit{PageSize: h.GetPageSize(), Limit: h.GetLimit()})
	}
	return out
}

// runtimeContainer is a container as PlanContainer takes it; oom_score_adj is in NRI's
// LinuxContainer, not its resources.
func runtimeContainer(ctr *api.Container) *pb.RuntimeContainer {
	res := linuxResources(ctr.GetLinux().GetResources())
	if adj := ctr.GetLinux().GetOomScoreAdj(); adj != nil {
		res.OomScoreAdj = adj.GetValue()
	}
	return &pb.RuntimeContainer{Name: ctr.GetName(), Resources: res}
}

func runtimePod(pod *api.PodSandbox, known []*record) *pb.RuntimePod {
	out := &pb.RuntimePod{
		Uid:          pod.GetUid(),
		Namespace:    pod.GetNamespace(),
		Name:         pod.GetName(),
		Annotations:  pod.GetAnnotations(),
		CgroupParent: pod.GetLinux().GetCgroupParent(),
	}
	for _, r := range known {
		if r.resources != nil {
			out.Containers = append(out.Containers, &pb.RuntimeContainer{Name: r.name, Resources: linuxResources(r.resources)})
		}
	}
	return out
}

// hadQuota says whether kubelet sent a CFS quota for the container: only then is it lifted,
// as kubelet's static policy lifts it.
func hadQuota(r *api.LinuxResources) bool {
	q := r.GetCpu().GetQuota()
	return q != nil && q.GetValue() > 0
}

func adjustment(p placement, sent *api.LinuxResources) *api.ContainerAdjustment {
	a := &api.ContainerAdjustment{}
	a.SetLinuxCPUSetCPUs(p.cpus)
	if p.mems != "" {
		a.SetLinuxCPUSetMems(p.mems)
	}
	if p.quotaUnlimited && hadQuota(sent) {
		a.SetLinuxCPUQuota(-1)
	}
	return a
}

func update(id string, p placement, quota bool) *api.ContainerUpdate {
	u := &api.ContainerUpdate{}
	u.SetContainerId(id)
	u.SetLinuxCPUSetCPUs(p.cpus)
	if p.mems != "" {
		u.SetLinuxCPUSetMems(p.mems)
	}
	if quota {
		u.SetLinuxCPUQuota(-1)
	}
	return u
}

// refusal is admission's no as the runtime reports it to kubelet (the shim's wording).
func refusal(reason, message string) error {
	return fmt.Errorf("topologyd: %s: %s", reason, message)
}

// needsPlacement says, while topologyd cannot be asked, whether the container cannot run as
// intended without its decision: a Guaranteed pod (from its cgroup parent), or one whose
// resources annotation may ask for exclusive CPUs or devices. Unknown counts as needed.
func needsPlacement(pod *api.PodSandbox) bool {
	if _, annotated := pod.GetAnnotations()["topologyd.io/resources"]; annotated {
		return true
	}
	parent := pod.GetLinux().GetCgroupParent()
	if strings.Contains(parent, "burstable") || strings.Contains(parent, "besteffort") {
		return false
	}
	return true
}
