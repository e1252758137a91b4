package main

import (
	"encoding/json"
	"strings"
	"testing"

	"topologyd.test/parity/oracle/caseformat"
)

func admitOp(t *testing.T, manifest string) caseformat.Operation {
	t.Helper()
	if !json.Valid([]byte(manifest)) {
		t.Fatalf("bad manifest %s", manifest)
	}
	return caseformat.Operation{Admit: json.RawMessage(manifest)}
}

func exclusive(name, cpus string) caseformat.Container {
	return caseformat.Container{Name: name, Exclusive: true, CPUs: cpus}
}

func admitted(pod string, containers ...caseformat.Container) caseformat.Decision {
	return caseformat.Decision{Op: "admit", Pod: pod, Admitted: true, Containers: containers, SharedPool: "0-7"}
}

func TestSameDecisionsAgree(t *testing.T) {
	r := caseformat.Result{Decisions: []caseformat.Decision{admitted("a", exclusive("app", "2-3"))}}
	if o := compare(caseformat.Case{}, r, r); !o.agreed || o.known != "" {
		t.Fatalf("got %+v", o)
	}
}

func TestAnUndocumentedDifferenceFails(t *testing.T) {
	k := caseformat.Result{Decisions: []caseformat.Decision{admitted("a", exclusive("app", "2-3"))}}
	d := caseformat.Result{Decisions: []caseformat.Decision{admitted("a", exclusive("app", "4-5"))}}
	o := compare(caseformat.Case{}, k, d)
	if o.agreed || !strings.Contains(o.different, "CPUs of app") {
		t.Fatalf("got %+v", o)
	}
	// Refused by one side only.
	d.Decisions[0] = caseformat.Decision{Op: "admit", Pod: "a", Reason: "TopologyAffinityError", SharedPool: "0-7"}
	if o := compare(caseformat.Case{Kubelet: caseformat.Config{MemoryManagerPolicy: "Static"}}, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
}

func TestMemoryRefusedAtMerge(t *testing.T) {
	c := caseformat.Case{Kubelet: caseformat.Config{MemoryManagerPolicy: "Static"}}
	k := caseformat.Result{Decisions: []caseformat.Decision{{Op: "admit", Pod: "a", Reason: "SMTAlignmentError"}}}
	d := caseformat.Result{Decisions: []caseformat.Decision{{Op: "admit", Pod: "a", Reason: "TopologyAffinityError",
		Message: "Resources cannot be allocated with Topology locality: pod (policy restricted): cpu: preferred [0]; memory: cannot be satisfied"}}}
	if o := compare(c, k, d); o.known != "memory-refused-at-merge" {
		t.Fatalf("got %+v", o)
	}
	// The same refusals without the Static memory manager are a difference.
	if o := compare(caseformat.Case{}, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
	// A CPU-only refusal at the merge is a difference too.
	d.Decisions[0].Message = "Resources cannot be allocated with Topology locality: pod (policy restricted): cpu: cannot be satisfied"
	if o := compare(c, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
}

func TestReadmissionReusesEarlierLife(t *testing.T) {
	manifest := `{"metadata": {"uid": "a"}, "spec": {"containers": [{"name": "app"}]}}`
	c := caseformat.Case{Operations: []caseformat.Operation{admitOp(t, manifest), {Remove: "a"}, admitOp(t, manifest)}}
	removed := caseformat.Decision{Op: "remove", Pod: "a", SharedPool: "0-7"}
	first := admitted("a", exclusive("app", "2-3"))
	kubeletAgain, topologydAgain := admitted("a", exclusive("app", "2-3")), admitted("a", exclusive("app", "4-5"))
	k := caseformat.Result{Decisions: []caseformat.Decision{first, removed, kubeletAgain}}
	d := caseformat.Result{Decisions: []caseformat.Decision{first, removed, topologydAgain}}
	if o := compare(c, k, d); o.known != "readmission-reuses-earlier-life" {
		t.Fatalf("got %+v", o)
	}
	// The re-admission agrees and a later pod shows the difference: known from the
	// re-admission on.
	later := caseformat.Decision{Op: "admit", Pod: "c", Reason: "UnexpectedAdmissionError"}
	k.Decisions = []caseformat.Decision{first, removed, first, admitted("c")}
	d.Decisions = []caseformat.Decision{first, removed, first, later}
	if o := compare(c, k, d); o.known != "readmission-reuses-earlier-life" {
		t.Fatalf("got %+v", o)
	}
	// A pod given nothing pinned in between leaves kubelet's bookkeeping alone.
	shared := admitted("b", caseformat.Container{Name: "app"})
	k.Decisions = []caseformat.Decision{first, removed, shared, kubeletAgain}
	d.Decisions = []caseformat.Decision{first, removed, shared, topologydAgain}
	if o := compare(c, k, d); o.known != "readmission-reuses-earlier-life" {
		t.Fatalf("got %+v", o)
	}
	// A pod given devices in between does not clear what kubelet kept of CPUs.
	withDevice := admitted("b", caseformat.Container{Name: "app", Devices: map[string][]string{"x/d": {"d0"}}})
	k.Decisions = []caseformat.Decision{first, removed, withDevice, kubeletAgain}
	d.Decisions = []caseformat.Decision{first, removed, withDevice, topologydAgain}
	if o := compare(c, k, d); o.known != "readmission-reuses-earlier-life" {
		t.Fatalf("got %+v", o)
	}
	// Devices held before a pod given devices was admitted, and still after it was deleted:
	// the device record outlives that pod's allocation.
	devices := caseformat.Container{Name: "app", Devices: map[string][]string{"x/d": {"d1"}}}
	firstWithDevices := admitted("a", devices)
	k.Decisions = []caseformat.Decision{firstWithDevices, withDevice, removed, admitted("a", devices)}
	d.Decisions = []caseformat.Decision{firstWithDevices, withDevice, removed, admitted("a")}
	if o := compare(c, k, d); o.known != "readmission-reuses-earlier-life" {
		t.Fatalf("got %+v", o)
	}
	// ...but not when a pod was given devices after the deletion.
	k.Decisions = []caseformat.Decision{firstWithDevices, removed, withDevice, admitted("a", devices)}
	d.Decisions = []caseformat.Decision{firstWithDevices, removed, withDevice, admitted("a")}
	if o := compare(c, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
	// A refused Burstable pod in between could not have been given exclusive CPUs; a refused
	// Guaranteed one could.
	for _, tc := range []struct {
		resources string
		known     bool
	}{
		{`{"requests": {"cpu": "500m"}, "limits": {"cpu": "2", "memory": "1Gi"}}`, true},
		{`{"limits": {"cpu": "2", "memory": "1Gi"}}`, false},
	} {
		refused := caseformat.Decision{Op: "admit", Pod: "b", Reason: "UnexpectedAdmissionError"}
		c.Operations = []caseformat.Operation{admitOp(t, manifest),
			admitOp(t, `{"metadata": {"uid": "b"}, "spec": {"containers": [{"name": "app", "resources": `+tc.resources+`}]}}`)}
		k.Decisions = []caseformat.Decision{first, removed, refused, kubeletAgain}
		d.Decisions = []caseformat.Decision{first, removed, refused, topologydAgain}
		if o := compare(c, k, d); (o.known == "readmission-reuses-earlier-life") != tc.known {
			t.Fatalf("%s: got %+v", tc.resources, o)
		}
	}
	c.Operations = c.Operations[:1]
	// Another pod given exclusive CPUs in between: kubelet has forgotten.
	other := admitted("b", exclusive("app", "6"))
	k.Decisions = []caseformat.Decision{first, removed, other, kubeletAgain}
	d.Decisions = []caseformat.Decision{first, removed, other, topologydAgain}
	if o := compare(c, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
}

func TestDevicesReusedArbitrarily(t *testing.T) {
	manifest := `{"metadata": {"uid": "a"}, "spec": {"initContainers": [{"name": "setup"}], "containers": [{"name": "app"}]}}`
	c := caseformat.Case{Operations: []caseformat.Operation{admitOp(t, manifest)}}
	setup := caseformat.Container{Name: "setup", Init: true, Devices: map[string][]string{"x/d": {"d0", "d1", "d2"}}}
	app := func(ids ...string) caseformat.Container {
		return caseformat.Container{Name: "app", Devices: map[string][]string{"x/d": ids}}
	}
	k := caseformat.Result{Decisions: []caseformat.Decision{admitted("a", setup, app("d2"))}}
	d := caseformat.Result{Decisions: []caseformat.Decision{admitted("a", setup, app("d0"))}}
	if o := compare(c, k, d); o.known != "devices-reused-arbitrarily" {
		t.Fatalf("got %+v", o)
	}
	// A device the init container did not hold is not a reuse.
	d.Decisions[0] = admitted("a", setup, app("d7"))
	if o := compare(c, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
}

func TestReservedMemoryBeyondNode(t *testing.T) {
	machine := `{"numa_nodes": [{"id": 0, "memory_bytes": 1073741824, "hugepages": [{"size_kib": 2048, "count": 256}]}]}`
	c := caseformat.Case{Machine: json.RawMessage(machine), Kubelet: caseformat.Config{MemoryManagerPolicy: "Static",
		ReservedMemory: []caseformat.MemoryReserve{{NUMANode: 0, Limits: map[string]string{"memory": "600Mi"}}}}}
	k := caseformat.Result{}
	d := caseformat.Result{SetupError: "reservedMemory: ..."}
	if o := compare(c, k, d); o.known != "reserved-memory-beyond-node" {
		t.Fatalf("got %+v", o)
	}
	// 512Mi of memory besides the 512Mi of huge pages: 500Mi fits, and a refusal is a difference.
	c.Kubelet.ReservedMemory[0].Limits["memory"] = "500Mi"
	if o := compare(c, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
}

func TestMemorySingleNodeInGroup(t *testing.T) {
	c := caseformat.Case{Kubelet: caseformat.Config{MemoryManagerPolicy: "Static"}}
	app := caseformat.Container{Name: "app", MemoryNUMA: []int{1}}
	k := caseformat.Result{Decisions: []caseformat.Decision{admitted("a", app)}}
	d := caseformat.Result{Decisions: []caseformat.Decision{{Op: "admit", Pod: "a", Reason: "UnexpectedAdmissionError",
		Message: "Allocate failed due to [memorymanager] preferred hint violates NUMA node allocation, which is unexpected"}}}
	if o := compare(c, k, d); o.known != "memory-single-node-in-group" {
		t.Fatalf("got %+v", o)
	}
	// kubelet went on and refused the pod later for another reason: the same difference.
	refusedLater := caseformat.Decision{Op: "admit", Pod: "a", Reason: "UnexpectedAdmissionError",
		Message: "Allocate failed due to not enough cpus available to satisfy request, which is unexpected"}
	if o := compare(c, caseformat.Result{Decisions: []caseformat.Decision{refusedLater}}, d); o.known != "memory-single-node-in-group" {
		t.Fatalf("got %+v", o)
	}
	// kubelet's memory on two nodes: not this difference.
	k.Decisions[0].Containers[0].MemoryNUMA = []int{0, 1}
	if o := compare(c, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
}

func TestMemoryPodRequestDropsInitOnlyTypes(t *testing.T) {
	manifest := `{"metadata": {"uid": "a"}, "spec": {
	  "initContainers": [{"name": "setup", "resources": {"limits": {"memory": "1Gi", "hugepages-2Mi": "4Mi"}}}],
	  "containers": [{"name": "app", "resources": {"limits": {"memory": "1Gi"}}}]}}`
	c := caseformat.Case{Kubelet: caseformat.Config{MemoryManagerPolicy: "Static", TopologyManagerScope: "pod"},
		Operations: []caseformat.Operation{admitOp(t, manifest)}}
	k := caseformat.Result{Decisions: []caseformat.Decision{{Op: "admit", Pod: "a", Reason: "UnexpectedAdmissionError"}}}
	d := caseformat.Result{Decisions: []caseformat.Decision{admitted("a", caseformat.Container{Name: "app"})}}
	if o := compare(c, k, d); o.known != "memory-pod-request-drops-init-only-types" {
		t.Fatalf("got %+v", o)
	}
	// Under the container scope every container's own request counts.
	c.Kubelet.TopologyManagerScope = "container"
	if o := compare(c, k, d); o.agreed {
		t.Fatalf("got %+v", o)
	}
}
