package plugin

import (
	"context"
	"fmt"

	"github.com/containerd/nri/pkg/api"

	"topologyd.local/nri/internal/config"
	pb "topologyd.local/nri/internal/topologydv1"
)

// CreateContainer places the container: one topologyd holds (a restart, a retry) keeps its
// placement; otherwise topologyd plans it (admitting the pod, or adding the container to it).
// The adjustment carries its CPUs, memory nodes and, for exclusive CPUs, no CFS quota.
func (p *Plugin) CreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.mu.Lock()
	if p.book.sandboxes[pod.GetId()] == nil {
		p.book.putSandbox(pod)
	}
	p.mu.Unlock()
	sent := ctr.GetLinux().GetResources()
	held, ok := p.placementOf(pod.GetUid(), ctr.GetName())
	if !ok {
		var err error
		held, ok, err = p.planContainer(ctx, pod, ctr)
		if err != nil {
			return nil, nil, err
		}
	}
	p.mu.Lock()
	p.book.putContainer(pod, ctr)
	p.mu.Unlock()
	if !ok {
		return nil, nil, nil
	}
	p.remember(ctr.GetId(), held)
	return adjustment(held, sent), nil, nil
}

// planContainer asks topologyd; ok false: create the container as it is.
func (p *Plugin) planContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (placement, bool, error) {
	reply, err := p.plan(ctx, pod, ctr)
	if err != nil {
		if answeredAboutThePod(err) {
			return placement{}, false, err
		}
		if needsPlacement(pod) || p.cfg.FailurePolicy == config.Fail {
			return placement{}, false, fmt.Errorf("topologyd-nri: container %s of pod %s/%s is not created until topologyd places it: %w",
				ctr.GetName(), pod.GetNamespace(), pod.GetName(), err)
		}
		p.log.Warn("container created unpinned (failurePolicy Ignore)", "container", ctr.GetName(),
			"pod", pod.GetNamespace()+"/"+pod.GetName(), "error", err)
		return placement{}, false, nil
	}
	switch reply.GetOutcome() {
	case pb.PlanContainerResponse_PLACED:
		if reply.GetSpecSource() == "estimate" && len(p.knownOf(pod.GetUid())) == 0 {
			p.log.Info("no full spec; placing the pod's containers from estimates", "pod",
				pod.GetNamespace()+"/"+pod.GetName(), "uid", pod.GetUid(), "unknown", reply.GetUnknown())
		}
		p.putAdmission(pod.GetUid(), reply.GetAdmission())
		if reply.GetPodCpuQuotaUnlimited() {
			p.liftPodQuota(pod)
		}
		return placementOf(reply.GetContainer()), true, nil
	case pb.PlanContainerResponse_REFUSED:
		return placement{}, false, refusal(reply.GetAdmission().GetReason(), reply.GetAdmission().GetMessage())
	case pb.PlanContainerResponse_NOT_PLACED:
		p.log.Info("creating the container unchanged", "why", reply.GetNote())
		return placement{}, false, nil
	}
	return placement{}, false, fmt.Errorf("topologyd-nri: topologyd answered container %s of pod %s/%s with an outcome this plugin does not know (%v)",
		ctr.GetName(), pod.GetNamespace(), pod.GetName(), reply.GetOutcome())
}

// PostStartContainer binds the started container's id and cgroup in topologyd.
func (p *Plugin) PostStartContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.bind(ctx, pod, ctr)
	return nil
}

// UpdateContainer keeps topologyd's cpuset (and the lifted quota) in what reaches the runtime.
func (p *Plugin) UpdateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container, res *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	held, ok := p.placementOf(pod.GetUid(), ctr.GetName())
	if !ok || held.containerID != ctr.GetId() {
		return nil, nil
	}
	if c := res.GetCpu().GetCpus(); c != "" && c != held.cpus {
		p.log.Warn("kubelet sent a cpuset; topologyd's is kept (set kubelet's cpuManagerPolicy, memoryManagerPolicy "+
			"and topologyManagerPolicy to none)", "container", ctr.GetId(), "sent", c, "kept", held.cpus)
	}
	p.remember(ctr.GetId(), held)
	return []*api.ContainerUpdate{update(ctr.GetId(), held, held.quotaUnlimited && hadQuota(res))}, nil
}

// StopContainer changes nothing: a stopped container keeps its CPUs until it is removed, as
// with kubelet (a restart reuses them).
func (p *Plugin) StopContainer(_ context.Context, _ *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.book.containers[ctr.GetId()]; r != nil {
		r.stopped = true // not adopted when topologyd comes back
	}
	return nil, nil
}

// RemoveContainer releases the container when this instance is the one topologyd bound and
// no newer instance of it exists (kubelet removes old instances while a new one runs).
func (p *Plugin) RemoveContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.mu.Lock()
	r := p.book.containers[ctr.GetId()]
	newer := r != nil && p.book.newerInstance(r)
	p.book.forgetContainer(ctr.GetId())
	delete(p.given, ctr.GetId())
	p.mu.Unlock()
	held, ok := p.placementOf(pod.GetUid(), ctr.GetName())
	if newer || !ok || held.containerID != ctr.GetId() {
		return nil
	}
	p.releaseContainer(ctx, pod.GetUid(), ctr.GetName(), ctr.GetId())
	return nil
}
