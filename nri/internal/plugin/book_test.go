package plugin

import (
	"testing"

	"github.com/containerd/nri/pkg/api"
)

func TestTheNewestSandboxOfAPodWins(t *testing.T) {
	b := newBook()
	b.putSandbox(&api.PodSandbox{Id: "s1", Uid: "u"})
	b.putSandbox(&api.PodSandbox{Id: "s2", Uid: "u"})
	b.putSandbox(&api.PodSandbox{Id: "s1", Uid: "u"}) // seen again: keeps its place
	if got := b.newestSandbox("u").GetId(); got != "s2" {
		t.Errorf("newest = %s", got)
	}
	b.forgetSandbox("s2")
	if got := b.newestSandbox("u").GetId(); got != "s1" {
		t.Errorf("newest = %s", got)
	}
	if b.newestSandbox("other") != nil {
		t.Error("a pod without a sandbox has none")
	}
}

func TestContainersKeepCreationOrderAndARestartIsANewerInstance(t *testing.T) {
	b := newBook()
	pod := &api.PodSandbox{Id: "s1", Uid: "u"}
	b.putSandbox(pod)
	b.putContainer(pod, &api.Container{Id: "c1", PodSandboxId: "s1", Name: "app"})
	b.putContainer(pod, &api.Container{Id: "c2", PodSandboxId: "s1", Name: "side"})
	b.putContainer(pod, &api.Container{Id: "c3", PodSandboxId: "s1", Name: "app"})
	var names []string
	for _, r := range b.ofPod("u") {
		names = append(names, r.id)
	}
	if len(names) != 3 || names[0] != "c1" || names[2] != "c3" {
		t.Errorf("order %v", names)
	}
	if !b.newerInstance(b.containers["c1"]) || b.newerInstance(b.containers["c3"]) {
		t.Error("c3 is the newer instance of app")
	}
	b.forgetSandbox("s1")
	if len(b.ofPod("u")) != 0 {
		t.Error("a forgotten sandbox takes its containers")
	}
}
