package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"topologyd.test/parity/oracle/caseformat"
)

// outcome of comparing one case.
type outcome struct {
	agreed    bool
	known     string // the known difference's name
	setup     bool   // both refused the configuration
	different string // what differs, for people
}

func compare(c caseformat.Case, kubelet, topologyd caseformat.Result) outcome {
	if kubelet.SetupError == "" && topologyd.SetupError != "" && reservesMoreThanNodeHas(c) {
		// kubelet computes a node's allocatable memory in uint64: a reservation beyond the
		// node wraps around to exabytes. topologyd refuses the configuration.
		return outcome{agreed: true, known: "reserved-memory-beyond-node"}
	}
	if (kubelet.SetupError == "") != (topologyd.SetupError == "") {
		return outcome{different: fmt.Sprintf("configuration: kubelet %q, topologyd %q", kubelet.SetupError, topologyd.SetupError)}
	}
	if kubelet.SetupError != "" {
		return outcome{agreed: true, setup: true}
	}
	if len(kubelet.Decisions) != len(topologyd.Decisions) {
		return outcome{different: fmt.Sprintf("%d decisions from kubelet, %d from topologyd", len(kubelet.Decisions), len(topologyd.Decisions))}
	}
	for i := range kubelet.Decisions {
		k, t := kubelet.Decisions[i], topologyd.Decisions[i]
		what := decisionDifference(k, t)
		if what == "" {
			for _, d := range knownDifferences {
				if d.evenWhenEqual && d.matches(c, kubelet.Decisions[:i], k, t) {
					return outcome{agreed: true, known: d.name}
				}
			}
			continue
		}
		for _, d := range knownDifferences {
			if d.matches(c, kubelet.Decisions[:i], k, t) {
				return outcome{agreed: true, known: d.name}
			}
		}
		return outcome{different: fmt.Sprintf("operation %d (%s %s): %s\n kubelet:   %s\n topologyd: %s", i, k.Op, k.Pod, what, show(k), show(t))}
	}
	return outcome{agreed: true}
}

func show(d caseformat.Decision) string {
	out, _ := json.Marshal(d)
	return string(out)
}

// decisionDifference names what differs between two decisions ("" when nothing does):
// admission and its reason, each container's CPUs, NUMA affinity, memory nodes and sizes and
// devices, and the shared pool. Refusal messages are not compared.
func decisionDifference(k, t caseformat.Decision) string {
	switch {
	case k.Op != t.Op || k.Pod != t.Pod:
		return "not the same operation"
	case k.Admitted != t.Admitted:
		return "admitted"
	case k.Reason != t.Reason:
		return "reason"
	case len(k.Containers) != len(t.Containers):
		return "containers"
	}
	for j := range k.Containers {
		kc, tc := k.Containers[j], t.Containers[j]
		switch {
		case kc.Name != tc.Name || kc.Init != tc.Init:
			return "containers"
		case kc.Exclusive != tc.Exclusive || kc.CPUs != tc.CPUs:
			return "CPUs of " + kc.Name
		case !slices.Equal(kc.NUMAAffinity, tc.NUMAAffinity):
			return "NUMA affinity of " + kc.Name
		case !slices.Equal(kc.MemoryNUMA, tc.MemoryNUMA):
			return "memory NUMA nodes of " + kc.Name
		case !maps.Equal(kc.Memory, tc.Memory):
			return "memory of " + kc.Name
		case !maps.EqualFunc(kc.Devices, tc.Devices, slices.Equal):
			return "devices of " + kc.Name
		}
	}
	if k.SharedPool != t.SharedPool {
		return "shared pool"
	}
	return ""
}
