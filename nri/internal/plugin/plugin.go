// Package plugin is topologyd's NRI front end: it turns the runtime's NRI events into calls to
// topologyd (PlanContainer, Allocate, Release) and topologyd's answers into container
// adjustments and updates. It decides nothing itself: docs/nri.md has the event table.
package plugin

import (
	"context"
	"log/slog"
	"sync"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	"topologyd.local/nri/internal/config"
	"topologyd.local/nri/internal/podquota"
	pb "topologyd.local/nri/internal/topologydv1"
)

// Plugin implements the NRI stub's event interfaces. Safe for concurrent events.
type Plugin struct {
	cfg       config.Config
	log       *slog.Logger
	topologyd pb.TopologydClient
	quota     *podquota.Lifter // nil: pod cgroups are not written

	mu sync.Mutex
	// Set once the stub exists: unsolicited updates go through it.
	updater func([]*api.ContainerUpdate) ([]*api.ContainerUpdate, error)
	book    *book
	// topologyd's placements, by pod uid and container name (its replies and its watch).
	held       map[string]map[string]placement
	generation uint64
	// What the runtime was last given, by container id.
	given map[string]placement
	// Pods whose pod cgroup quota was lifted, by uid.
	quotaLifted map[string]bool
}

// New makes the plugin; SetUpdater connects it to the stub once that exists. quota nil: pod
// cgroups are not written.
func New(cfg config.Config, log *slog.Logger, topologyd pb.TopologydClient, quota *podquota.Lifter) *Plugin {
	return &Plugin{cfg: cfg, log: log, topologyd: topologyd, quota: quota, book: newBook(),
		held: map[string]map[string]placement{}, given: map[string]placement{},
		quotaLifted: map[string]bool{}}
}

// SetUpdater gives the plugin the stub's UpdateContainers.
func (p *Plugin) SetUpdater(s stub.Stub) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.updater = s.UpdateContainers
}

// Configure logs what the plugin runs under; the events are the interfaces it implements.
func (p *Plugin) Configure(_ context.Context, _, runtime, version string) (stub.EventMask, error) {
	p.log.Info("registered with the runtime", "runtime", runtime, "version", version)
	return 0, nil
}

// Shutdown is the runtime going away; the plugin reconnects when it is back.
func (p *Plugin) Shutdown(context.Context) {
	p.log.Info("the runtime is shutting down")
}

// Synchronize takes the runtime's sandboxes and containers: running containers bound in
// topologyd, pods topologyd holds without a sandbox released, running containers it does not
// hold admitted and pinned, and the cpuset of every container whose cpuset drifted sent again.
func (p *Plugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, containers []*api.Container) ([]*api.ContainerUpdate, error) {
	live := map[string]*api.PodSandbox{}
	p.mu.Lock()
	p.book = newBook()
	p.given = map[string]placement{}
	for _, pod := range pods {
		p.book.putSandbox(pod)
		live[pod.GetId()] = pod
	}
	for _, ctr := range containers {
		if pod := live[ctr.GetPodSandboxId()]; pod != nil {
			p.book.putContainer(pod, ctr)
		}
	}
	p.mu.Unlock()

	if err := p.refresh(ctx); err != nil {
		// Nothing is released or adopted on a guess; the follower catches up when it can.
		p.log.Warn("synchronised without topologyd's allocations", "error", err)
		return nil, nil
	}
	var updates []*api.ContainerUpdate
	for _, ctr := range containers {
		pod := live[ctr.GetPodSandboxId()]
		state := ctr.GetState()
		if pod == nil || (state != api.ContainerState_CONTAINER_RUNNING && state != api.ContainerState_CONTAINER_CREATED) {
			continue
		}
		held, ok := p.placementOf(pod.GetUid(), ctr.GetName())
		if !ok {
			if adopted := p.adopt(ctx, pod, ctr); adopted != nil {
				updates = append(updates, adopted)
			}
			continue
		}
		if held.containerID != ctr.GetId() && state == api.ContainerState_CONTAINER_RUNNING {
			p.bind(ctx, pod, ctr)
		}
		sent := ctr.GetLinux().GetResources().GetCpu()
		if sent.GetCpus() != held.cpus || (held.mems != "" && sent.GetMems() != held.mems) {
			p.log.Info("container cpuset drifted; sending topologyd's again", "container", ctr.GetName(),
				"id", ctr.GetId(), "cpus", sent.GetCpus(), "want", held.cpus)
			updates = append(updates, update(ctr.GetId(), held, false))
		}
		p.remember(ctr.GetId(), held)
	}
	if p.cfg.Resync.ReleaseOrphans {
		p.releaseOrphans(ctx, pods)
	}
	return updates, nil
}

// RunPodSandbox admits a pod with a full spec (the resources annotation) whole, as kubelet
// admits a pod before creating anything; a refusal fails the sandbox.
func (p *Plugin) RunPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	p.mu.Lock()
	p.book.putSandbox(pod)
	_, holds := p.held[pod.GetUid()]
	p.mu.Unlock()
	if holds {
		return nil
	}
	reply, err := p.plan(ctx, pod, nil)
	if err != nil {
		if answeredAboutThePod(err) {
			return err
		}
		// Without the annotation the containers are placed one at a time, later.
		if _, annotated := pod.GetAnnotations()["topologyd.io/resources"]; !annotated {
			return nil
		}
		if needsPlacement(pod) || p.cfg.FailurePolicy == config.Fail {
			return podNotStarted(pod, err)
		}
		return nil
	}
	switch reply.GetOutcome() {
	case pb.PlanContainerResponse_REFUSED:
		return refusal(reply.GetAdmission().GetReason(), reply.GetAdmission().GetMessage())
	case pb.PlanContainerResponse_PLACED:
		p.putAdmission(pod.GetUid(), reply.GetAdmission())
		if reply.GetPodCpuQuotaUnlimited() {
			p.liftPodQuota(pod)
		}
	}
	return nil
}

// liftPodQuota runs the pod cgroup without a CFS quota, once per pod, as kubelet's static policy
// creates the pod cgroup of a pod with exclusive CPUs. A failure is logged, not the runtime's:
// the container still runs on its own CPUs.
func (p *Plugin) liftPodQuota(pod *api.PodSandbox) {
	if p.quota == nil {
		return
	}
	p.mu.Lock()
	done := p.quotaLifted[pod.GetUid()]
	p.quotaLifted[pod.GetUid()] = true
	p.mu.Unlock()
	if done {
		return
	}
	podCgroup, err := p.quota.PodCgroup(pod.GetLinux().GetCgroupParent())
	if err == nil {
		err = p.quota.Lift(podCgroup)
	}
	if err != nil {
		p.log.Warn("the pod cgroup's CFS quota was not lifted; its exclusive containers keep the pod's quota",
			"pod", pod.GetNamespace()+"/"+pod.GetName(), "parent", pod.GetLinux().GetCgroupParent(),
			"hierarchy", p.quota.Hierarchy(), "error", err)
		return
	}
	p.log.Info("pod cgroup runs without a CFS quota (exclusive CPUs)", "pod",
		pod.GetNamespace()+"/"+pod.GetName(), "cgroup", podCgroup)
}

// StopPodSandbox releases the pod (its newest sandbox only).
func (p *Plugin) StopPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	p.podSandboxEnds(ctx, pod, false)
	return nil
}

// RemovePodSandbox releases the pod (its newest sandbox only) and forgets the sandbox.
func (p *Plugin) RemovePodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	p.podSandboxEnds(ctx, pod, true)
	return nil
}

func (p *Plugin) podSandboxEnds(ctx context.Context, pod *api.PodSandbox, removed bool) {
	p.mu.Lock()
	newest := p.book.newestSandbox(pod.GetUid())
	isNewest := newest == nil || newest.GetId() == pod.GetId()
	if removed {
		p.book.forgetSandbox(pod.GetId())
		if p.book.newestSandbox(pod.GetUid()) == nil {
			delete(p.quotaLifted, pod.GetUid())
		}
	}
	_, holds := p.held[pod.GetUid()]
	p.mu.Unlock()
	// A late stop of an older sandbox must not release what the pod's new sandbox holds.
	if !isNewest || !holds {
		return
	}
	why := "sandbox stopped"
	if removed {
		why = "sandbox removed"
	}
	p.releasePod(ctx, pod.GetUid(), why)
}
