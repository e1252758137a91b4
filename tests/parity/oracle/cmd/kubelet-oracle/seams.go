package main

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// What kubelet gives its managers at Start, reduced to what an offline run has: the pods
// kubelet considers active, sources that are ready, no pod status and a runtime that accepts
// every update.

// The CPU manager's reconcile loop starts at Start and then waits this long; it finds no
// running container (noStatus) and so changes nothing.
const reconcilePeriod = time.Hour

// activePods is kubelet's GetActivePods: the admitted pods and the one being admitted.
type activePods struct {
	mu   sync.Mutex
	pods []*v1.Pod
}

func (a *activePods) list() []*v1.Pod {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*v1.Pod(nil), a.pods...)
}

func (a *activePods) add(pod *v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pods = append(a.pods, pod)
}

func (a *activePods) remove(uid types.UID) *v1.Pod {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, pod := range a.pods {
		if pod.UID == uid {
			a.pods = append(a.pods[:i], a.pods[i+1:]...)
			return pod
		}
	}
	return nil
}

type sourcesReady struct{}

func (sourcesReady) AddSource(string) {}
func (sourcesReady) AllReady() bool   { return true }

type noStatus struct{}

func (noStatus) GetPodStatus(types.UID) (v1.PodStatus, bool) { return v1.PodStatus{}, false }

type noRuntime struct{}

func (noRuntime) UpdateContainerResources(context.Context, string, *runtimeapi.ContainerResources) error {
	return nil
}
