package plugin

import (
	"context"
	"time"

	"github.com/containerd/nri/pkg/api"

	pb "topologyd.local/nri/internal/topologydv1"
)

// Follow keeps the plugin's copy of topologyd's placements current from its WatchAllocations
// stream, and sends the runtime every bound container's placement that differs from what the
// runtime was last given (the shared pool grew or shrank): containerd re-applies its stored
// cpuset on every update, so a cgroup write by topologyd alone would not last. Returns when
// ctx ends; a broken stream is opened again.
func (p *Plugin) Follow(ctx context.Context) {
	backoff := 100 * time.Millisecond
	lost := false
	for ctx.Err() == nil {
		stream, err := p.topologyd.WatchAllocations(ctx, &pb.WatchAllocationsRequest{})
		fresh := true
		for err == nil {
			var listing *pb.ListAllocationsResponse
			if listing, err = stream.Recv(); err == nil {
				p.replace(listing, fresh)
				if fresh && lost {
					// topologyd is back: what the runtime created meanwhile is placed now.
					p.catchUp(ctx)
				}
				fresh, lost = false, false
				backoff = 100 * time.Millisecond
				p.PushPlacements()
			}
		}
		lost = true
		if ctx.Err() != nil {
			return
		}
		p.log.Debug("topologyd's allocation stream ended; opening it again", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// catchUp adopts the containers the plugin saw created while topologyd could not place them
// (failurePolicy Ignore), as Synchronize adopts the ones it finds running.
func (p *Plugin) catchUp(ctx context.Context) {
	type unplaced struct {
		pod *api.PodSandbox
		ctr *api.Container
	}
	var due []unplaced
	p.mu.Lock()
	for _, r := range p.book.containers {
		pod := p.book.sandboxes[r.sandboxID]
		if _, held := p.held[r.podUID][r.name]; held || pod == nil || r.resources == nil || r.stopped {
			continue
		}
		due = append(due, unplaced{pod, &api.Container{Id: r.id, PodSandboxId: r.sandboxID, Name: r.name,
			State: api.ContainerState_CONTAINER_RUNNING, Linux: &api.LinuxContainer{Resources: r.resources}}})
	}
	updater := p.updater
	p.mu.Unlock()
	var updates []*api.ContainerUpdate
	for _, u := range due {
		if adopted := p.adopt(ctx, u.pod, u.ctr); adopted != nil {
			updates = append(updates, adopted)
		}
	}
	if len(updates) == 0 || updater == nil {
		return
	}
	if failed, err := updater(updates); err != nil || len(failed) > 0 {
		p.log.Warn("the runtime did not take every adopted container's placement", "error", err, "failed", len(failed))
	}
}

// PushPlacements sends the runtime the placements that differ from what it was given.
func (p *Plugin) PushPlacements() {
	p.mu.Lock()
	updater := p.updater
	var due []*api.ContainerUpdate
	var placed []placement
	for _, pod := range p.held {
		for _, held := range pod {
			given, known := p.given[held.containerID]
			if held.containerID == "" || !known || (given.cpus == held.cpus && given.mems == held.mems) {
				continue
			}
			due = append(due, update(held.containerID, held, false))
			placed = append(placed, held)
		}
	}
	p.mu.Unlock()
	if updater == nil || len(due) == 0 {
		return
	}
	failed, err := updater(due)
	if err != nil {
		p.log.Warn("the runtime did not take the new placements", "error", err)
		return
	}
	refused := map[string]bool{}
	for _, f := range failed {
		refused[f.GetContainerId()] = true
	}
	for i, u := range due {
		if refused[u.GetContainerId()] {
			p.log.Warn("the runtime did not take the new cpuset", "container", u.GetContainerId(), "cpus", placed[i].cpus)
			continue
		}
		p.log.Info("container now on CPUs", "container", u.GetContainerId(), "cpus", placed[i].cpus)
		p.remember(u.GetContainerId(), placed[i])
	}
}
