package plugin

import (
	"context"
	"fmt"

	"github.com/containerd/nri/pkg/api"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "topologyd.local/nri/internal/topologydv1"
)

func (p *Plugin) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.cfg.TopologydTimeout.Duration)
}

// plan asks topologyd's PlanContainer; ctr nil: the pod's sandbox.
func (p *Plugin) plan(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*pb.PlanContainerResponse, error) {
	request := &pb.PlanContainerRequest{
		Pod:         runtimePod(pod, p.knownOf(pod.GetUid())),
		SpecSources: &pb.SpecSources{Sources: p.cfg.PodSpec.Sources},
	}
	if ctr != nil {
		request.Container = runtimeContainer(ctr)
	}
	ctx, cancel := p.call(ctx)
	defer cancel()
	reply, err := p.topologyd.PlanContainer(ctx, request)
	if err != nil {
		return nil, failure(p.cfg.TopologydSocket, "PlanContainer", err)
	}
	return reply, nil
}

// knownOf lists the pod's containers the runtime has created so far, oldest first.
func (p *Plugin) knownOf(podUID string) []*record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.book.ofPod(podUID)
}

// bind tells topologyd the container's runtime id and cgroup; what fails is logged and left
// to the next synchronisation.
func (p *Plugin) bind(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) {
	if _, ok := p.placementOf(pod.GetUid(), ctr.GetName()); !ok {
		return // not placed by topologyd
	}
	ctx, cancel := p.call(ctx)
	defer cancel()
	reply, err := p.topologyd.Allocate(ctx, &pb.AllocateRequest{
		PodUid: pod.GetUid(), ContainerName: ctr.GetName(), ContainerId: ctr.GetId(),
		CgroupParent: pod.GetLinux().GetCgroupParent(),
	})
	if err != nil {
		p.log.Warn("container not bound yet, the next synchronisation retries", "container", ctr.GetName(),
			"id", ctr.GetId(), "pod", pod.GetUid(), "error", failure(p.cfg.TopologydSocket, "Allocate", err))
		return
	}
	p.putContainer(pod.GetUid(), reply.GetContainer())
	p.log.Info("container bound", "container", ctr.GetName(), "id", ctr.GetId(), "pod", pod.GetUid(),
		"cgroup", reply.GetContainer().GetCgroup(), "cpus", reply.GetContainer().GetCpus())
}

func (p *Plugin) releasePod(ctx context.Context, podUID, why string) {
	ctx, cancel := p.call(ctx)
	defer cancel()
	_, err := p.topologyd.Release(ctx, &pb.ReleaseRequest{PodUid: podUID})
	if err != nil && status.Code(err) != codes.NotFound {
		p.log.Warn("pod not released, the next synchronisation retries", "pod", podUID, "why", why,
			"error", failure(p.cfg.TopologydSocket, "Release", err))
		return
	}
	p.mu.Lock()
	delete(p.held, podUID)
	p.mu.Unlock()
	p.log.Info("pod released", "pod", podUID, "why", why)
}

func (p *Plugin) releaseContainer(ctx context.Context, podUID, name, id string) {
	ctx, cancel := p.call(ctx)
	defer cancel()
	_, err := p.topologyd.Release(ctx, &pb.ReleaseRequest{PodUid: podUID, ContainerName: name, ContainerId: id})
	if err != nil && status.Code(err) != codes.NotFound {
		p.log.Warn("container removed but not released", "container", name, "id", id, "pod", podUID,
			"error", failure(p.cfg.TopologydSocket, "Release", err))
		return
	}
	p.mu.Lock()
	delete(p.held[podUID], name)
	p.mu.Unlock()
}

// refresh replaces the plugin's copy of topologyd's placements with a full listing.
func (p *Plugin) refresh(ctx context.Context) error {
	ctx, cancel := p.call(ctx)
	defer cancel()
	listing, err := p.topologyd.ListAllocations(ctx, &pb.ListAllocationsRequest{})
	if err != nil {
		return failure(p.cfg.TopologydSocket, "ListAllocations", err)
	}
	p.replace(listing, true)
	return nil
}

// adopt places a running container topologyd does not hold (created while it was unreachable
// under failurePolicy Ignore): the update to pin it, or nil.
func (p *Plugin) adopt(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) *api.ContainerUpdate {
	held, ok, err := p.planContainer(ctx, pod, ctr)
	if err != nil || !ok {
		if err != nil {
			p.log.Warn("running container not held by topologyd was not adopted", "container", ctr.GetName(),
				"id", ctr.GetId(), "pod", pod.GetNamespace()+"/"+pod.GetName(), "error", err)
		}
		return nil
	}
	p.log.Info("adopting running container", "container", ctr.GetName(), "id", ctr.GetId(), "cpus", held.cpus)
	if ctr.GetState() == api.ContainerState_CONTAINER_RUNNING {
		p.bind(ctx, pod, ctr)
	}
	p.remember(ctr.GetId(), held)
	return update(ctr.GetId(), held, held.quotaUnlimited && hadQuota(ctr.GetLinux().GetResources()))
}

func (p *Plugin) releaseOrphans(ctx context.Context, pods []*api.PodSandbox) {
	live := map[string]bool{}
	for _, pod := range pods {
		live[pod.GetUid()] = true
	}
	p.mu.Lock()
	var orphans []string
	for uid := range p.held {
		if !live[uid] {
			orphans = append(orphans, uid)
		}
	}
	p.mu.Unlock()
	for _, uid := range orphans {
		p.releasePod(ctx, uid, "no sandbox in the runtime")
	}
}

// answeredAboutThePod says whether topologyd's error is about the pod (its spec is wrong or
// missing) rather than a sign that it could not decide: then the failure policy does not apply.
func answeredAboutThePod(err error) bool {
	code := status.Code(err)
	return code == codes.InvalidArgument || code == codes.FailedPrecondition
}

// failure names topologyd and the call, keeping the gRPC status for answeredAboutThePod.
func failure(socket, call string, err error) error {
	s := status.Convert(err)
	return status.Error(s.Code(), fmt.Sprintf("topologyd at %s did not answer %s: %s", socket, call, s.Message()))
}

func podNotStarted(pod *api.PodSandbox, err error) error {
	return fmt.Errorf("topologyd-nri: pod %s/%s is not started until topologyd admits it: %w",
		pod.GetNamespace(), pod.GetName(), err)
}
