package plugin

import (
	"sort"

	"github.com/containerd/nri/pkg/api"
)

// book is what the plugin remembers of the runtime's sandboxes and containers: the pod each
// belongs to, its cgroup parent and annotations, and each container's Linux resources (what
// topologyd estimates a pod without a spec from). A cache: Synchronize rebuilds it.
// Not synchronised; the plugin holds its lock.
type book struct {
	sandboxes  map[string]*api.PodSandbox // by sandbox id
	sandboxSeq map[string]uint64          // creation order, by sandbox id
	containers map[string]*record         // by container id
	next       uint64
}

type record struct {
	id        string
	sandboxID string
	podUID    string
	name      string
	resources *api.LinuxResources // nil when the runtime did not say
	seq       uint64              // creation order
	stopped   bool
}

func newBook() *book {
	return &book{sandboxes: map[string]*api.PodSandbox{}, sandboxSeq: map[string]uint64{},
		containers: map[string]*record{}}
}

func (b *book) putSandbox(pod *api.PodSandbox) {
	if _, known := b.sandboxes[pod.GetId()]; !known {
		b.next++
		b.sandboxSeq[pod.GetId()] = b.next
	}
	b.sandboxes[pod.GetId()] = pod
}

// forgetSandbox forgets the sandbox and every container in it.
func (b *book) forgetSandbox(id string) {
	delete(b.sandboxes, id)
	delete(b.sandboxSeq, id)
	for cid, c := range b.containers {
		if c.sandboxID == id {
			delete(b.containers, cid)
		}
	}
}

// newestSandbox is the pod's most recently created sandbox, or nil.
func (b *book) newestSandbox(podUID string) *api.PodSandbox {
	var newest *api.PodSandbox
	var seq uint64
	for id, s := range b.sandboxes {
		if s.GetUid() == podUID && b.sandboxSeq[id] >= seq {
			newest, seq = s, b.sandboxSeq[id]
		}
	}
	return newest
}

func (b *book) putContainer(pod *api.PodSandbox, ctr *api.Container) {
	r := b.containers[ctr.GetId()]
	if r == nil {
		b.next++
		r = &record{id: ctr.GetId(), seq: b.next}
		b.containers[ctr.GetId()] = r
	}
	r.sandboxID = ctr.GetPodSandboxId()
	r.podUID = pod.GetUid()
	r.name = ctr.GetName()
	if res := ctr.GetLinux().GetResources(); res != nil {
		r.resources = res
	}
}

func (b *book) forgetContainer(id string) { delete(b.containers, id) }

// ofPod lists the pod's containers, oldest first.
func (b *book) ofPod(podUID string) []*record {
	var out []*record
	for _, c := range b.containers {
		if c.podUID == podUID {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// newerInstance says whether the pod has a container of the same name created after `r`.
func (b *book) newerInstance(r *record) bool {
	for _, c := range b.ofPod(r.podUID) {
		if c.name == r.name && c.id != r.id && c.seq > r.seq {
			return true
		}
	}
	return false
}
