package plugin

import (
	pb "topologyd.local/nri/internal/topologydv1"
)

func (p *Plugin) placementOf(podUID, name string) (placement, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	held, ok := p.held[podUID][name]
	return held, ok
}

// putAdmission takes an admission's reply for one pod.
func (p *Plugin) putAdmission(podUID string, admission *pb.AdmitResponse) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pod := map[string]placement{}
	for _, c := range admission.GetContainers() {
		pod[c.GetName()] = placementOf(c)
	}
	p.held[podUID] = pod
	// A listing older than this admission must not take it back.
	if admission.GetStateGeneration() > p.generation {
		p.generation = admission.GetStateGeneration()
	}
}

func (p *Plugin) putContainer(podUID string, c *pb.ContainerAllocation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[podUID] == nil {
		p.held[podUID] = map[string]placement{}
	}
	p.held[podUID][c.GetName()] = placementOf(c)
}

// replace takes a full listing; an older one than seen is ignored unless `fresh` (the first of
// a new watch, or a listing asked for: topologyd's state whatever came before).
func (p *Plugin) replace(listing *pb.ListAllocationsResponse, fresh bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !fresh && listing.GetStateGeneration() < p.generation {
		return
	}
	p.generation = listing.GetStateGeneration()
	p.held = map[string]map[string]placement{}
	for _, pod := range listing.GetPods() {
		containers := map[string]placement{}
		for _, c := range pod.GetContainers() {
			containers[c.GetName()] = placementOf(c)
		}
		p.held[pod.GetUid()] = containers
	}
}

// remember records what the runtime was given for a container.
func (p *Plugin) remember(id string, given placement) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.given[id] = given
}
