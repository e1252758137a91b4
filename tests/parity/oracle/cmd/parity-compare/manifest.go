// The pod manifests of a case, as the comparison's rules (differences.go) read them.

package main

import (
	"encoding/json"
	"strings"

	"topologyd.test/parity/oracle/caseformat"
)

type manifest struct {
	Metadata struct {
		UID string `json:"uid"`
	} `json:"metadata"`
	Spec struct {
		InitContainers []manifestContainer `json:"initContainers"`
		Containers     []manifestContainer `json:"containers"`
	} `json:"spec"`
}

type manifestContainer struct {
	Name          string `json:"name"`
	RestartPolicy string `json:"restartPolicy"`
	Resources     struct {
		Requests map[string]string `json:"requests"`
		Limits   map[string]string `json:"limits"`
	} `json:"resources"`
}

// podManifest is the manifest the case admits pod uid with.
func podManifest(c caseformat.Case, uid string) (manifest, bool) {
	for _, op := range c.Operations {
		var pod manifest
		if op.Admit != nil && json.Unmarshal(op.Admit, &pod) == nil && pod.Metadata.UID == uid {
			return pod, true
		}
	}
	return manifest{}, false
}

// memoryTypes are the memory types ("memory", "hugepages-*") the pod's init containers
// (sidecars included) and its app containers ask for.
func memoryTypes(c caseformat.Case, uid string) (init, app map[string]bool) {
	init, app = map[string]bool{}, map[string]bool{}
	pod, _ := podManifest(c, uid)
	for _, list := range []struct {
		containers []manifestContainer
		types      map[string]bool
	}{{pod.Spec.InitContainers, init}, {pod.Spec.Containers, app}} {
		for _, ctr := range list.containers {
			for name := range ctr.Resources.Limits {
				if name == "memory" || strings.HasPrefix(name, "hugepages-") {
					list.types[name] = true
				}
			}
		}
	}
	return init, app
}

// finishedInitContainers are the regular (not restartable) init containers of the pod that
// run before container name, from the pod's manifest in the case.
func finishedInitContainers(c caseformat.Case, uid, name string) map[string]bool {
	out := map[string]bool{}
	pod, _ := podManifest(c, uid)
	for _, ic := range pod.Spec.InitContainers {
		if ic.Name == name {
			break
		}
		if ic.RestartPolicy != "Always" {
			out[ic.Name] = true
		}
	}
	return out
}
