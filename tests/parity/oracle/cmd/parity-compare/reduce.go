package main

import (
	"slices"

	"topologyd.test/parity/oracle/caseformat"
)

// reduce makes a disagreeing case smaller while it still disagrees: it drops operations one
// at a time (a pod's arrival together with its later deletions and re-arrivals), last first,
// until no single drop keeps the disagreement.
func reduce(d deciders, c caseformat.Case) caseformat.Case {
	for changed := true; changed; {
		changed = false
		for i := len(c.Operations) - 1; i >= 0; i-- {
			smaller := c
			smaller.Operations = withoutOperation(c.Operations, i)
			if len(smaller.Operations) == 0 || !valid(smaller.Operations) {
				continue
			}
			if o, err := d.both(smaller); err == nil && !o.agreed {
				c = smaller
				changed = true
				i = min(i, len(c.Operations))
			}
		}
	}
	return c
}

// withoutOperation drops operation i; dropping a pod's first arrival drops every operation
// on that pod.
func withoutOperation(ops []caseformat.Operation, i int) []caseformat.Operation {
	uid := podOf(ops[i])
	first := slices.IndexFunc(ops, func(o caseformat.Operation) bool { return podOf(o) == uid })
	if first != i {
		return slices.Delete(slices.Clone(ops), i, i+1)
	}
	var out []caseformat.Operation
	for _, o := range ops {
		if podOf(o) != uid {
			out = append(out, o)
		}
	}
	return out
}

// valid: no pod arrives while it is admitted (kubelet admits a uid again only after its
// deletion; dropping a deletion must not make a case kubelet never sees).
func valid(ops []caseformat.Operation) bool {
	live := map[string]bool{}
	for _, o := range ops {
		uid := podOf(o)
		if o.Remove != "" {
			delete(live, uid)
			continue
		}
		if live[uid] {
			return false
		}
		live[uid] = true
	}
	return true
}
