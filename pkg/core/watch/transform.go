package watch

import (
	"maps"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core/compact"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// TransformFor returns the cache transform of a kind: what the informer keeps
// of each object, decided by what the core and the adapters read.
//
//   - Pods: the core reads their identity, their controller ownerReference
//     and, from status.initContainerStatuses and status.containerStatuses,
//     each container's name, image and imageID (running digests, and the
//     event mapper's change detection). Everything else is dropped: spec,
//     labels, annotations, managed fields, and every other status field.
//   - Tracked and referenced kinds: adapters scrape spec and metadata
//     (annotations declare models), and read referenced objects' spec; no
//     adapter reads status. Status, managed fields and the
//     last-applied-configuration annotation are dropped.
//   - Walk-only kinds (cached as metadata only): managed fields and the
//     last-applied-configuration annotation are dropped.
//
// Every transform keeps apiVersion, kind, name, namespace, uid,
// resourceVersion, generation, creation and deletion timestamps and
// ownerReferences, is idempotent (client-go may hand it an object twice),
// changes the object in place, and never panics on a malformed object: a
// field of an unexpected type is dropped, or the object left as it is.
func TransformFor(e graph.Entry) toolscache.TransformFunc {
	switch {
	case e.GroupKind() == graph.PodGroupKind:
		return TransformPod
	case e.Tracked(), e.Role == adapter.RoleReferenced, e.Generic():
		return TransformTracked
	default:
		return graph.TransformMetadata
	}
}

// TransformPod keeps of a Pod what the core reads (see TransformFor).
func TransformPod(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || u == nil || u.Object == nil {
		return graph.TransformMetadata(in)
	}
	out := make(map[string]any, 4)
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := u.Object[k]; ok {
			out[k] = v
		}
	}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		out["metadata"] = keepKeys(md, podMetadataKeys)
	}
	if st, ok := u.Object["status"].(map[string]any); ok {
		status := map[string]any{}
		for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
			list, ok := st[field].([]any)
			if !ok {
				continue
			}
			kept := make([]any, 0, len(list))
			for _, s := range list {
				if m, ok := s.(map[string]any); ok {
					kept = append(kept, keepKeys(m, containerStatusKeys))
				}
			}
			status[field] = kept
		}
		out["status"] = status
	}
	u.Object = out
	return u, nil
}

// TransformPodFor is TransformPod that also keeps, for a pod that may be read
// as part of a generic root (graph.Registry.PodReadWhole: nothing controls
// it, or its controller is of a kind no adapter declares), what the generic
// scraper reads of it: each container's name, image, command, args, env
// (name and value) and resources, the volumes they mount, and the pod's
// model annotations. A pod controlled by a kind an adapter declares
// is read through its workload's template, so its spec is dropped as before.
func TransformPodFor(reg *graph.Registry) toolscache.TransformFunc {
	return func(in any) (any, error) {
		u, ok := in.(*unstructured.Unstructured)
		var spec map[string]any
		var annotations map[string]string
		if ok && u != nil && u.Object != nil && reg.PodReadWhole(metav1.GetControllerOfNoCopy(u)) {
			if sp, ok := u.Object["spec"].(map[string]any); ok {
				spec = podSpecSubset(sp)
			}
			// The annotations a scraper reads of a pod: those naming its
			// model. The rest (kubectl's copy of the manifest, a tenant's
			// 256 KiB of anything) is neither cached nor a reason to
			// reconcile. The API server stores only strings there.
			if md, ok := u.Object["metadata"].(map[string]any); ok {
				annotations, _ = podtemplate.ModelAnnotations(md, "metadata")
			}
		}
		out, err := TransformPod(in)
		if err != nil {
			return out, err
		}
		if o, ok := out.(*unstructured.Unstructured); ok && o.Object != nil {
			if spec != nil {
				o.Object["spec"] = spec
			}
			if len(annotations) > 0 {
				o.SetAnnotations(annotations)
			}
		}
		return out, err
	}
}

// podContainerKeys is what the generic scraper reads of a pod's container.
// prunePod (native.go) keeps the same fields of a pod read in protobuf, and
// containerStatusKeys' of its container statuses: a key added here is added
// there too (TestNativePruneKeepsWhatTheTransformsKeep fails otherwise).
var podContainerKeys = []string{"name", "image", "command", "args", "env", "resources", "volumeMounts"}

// podSpecSubset keeps the containers, init containers and volumes of a pod
// spec, each container cut to podContainerKeys and each env entry to its name
// and literal value.
func podSpecSubset(spec map[string]any) map[string]any {
	out := map[string]any{}
	for _, field := range []string{"initContainers", "containers"} {
		list, ok := spec[field].([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, c := range list {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			k := keepKeys(m, podContainerKeys)
			if env, ok := k["env"].([]any); ok {
				slim := make([]any, 0, len(env))
				for _, e := range env {
					if em, ok := e.(map[string]any); ok {
						slim = append(slim, keepKeys(em, []string{"name", "value"}))
					}
				}
				k["env"] = slim
			}
			kept = append(kept, k)
		}
		out[field] = kept
	}
	if v, ok := spec["volumes"].([]any); ok {
		out["volumes"] = v
	}
	return out
}

// podMetadataKeys is the metadata of a Pod the core reads.
var podMetadataKeys = []string{"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "ownerReferences"}

// containerStatusKeys is what digest resolution reads of a container status.
var containerStatusKeys = []string{"name", "image", "imageID"}

func keepKeys(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TransformTracked keeps of a tracked object what adapters scrape (see
// TransformFor).
func TransformTracked(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || u == nil || u.Object == nil {
		return graph.TransformMetadata(in)
	}
	delete(u.Object, "status")
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return u, nil
	}
	delete(md, "managedFields")
	if ann, ok := md["annotations"].(map[string]any); ok {
		delete(ann, graph.LastAppliedAnnotation)
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	return u, nil
}

// transform is the cache transform the supervisor gives a kind: TransformFor,
// then, for the kinds read whole (tracked, referenced, pods), the compact form
// (compact.Object; an object that cannot be compacted stays unstructured,
// which the Store reads too), plus the record of its objects' controller kinds (MayBeControlledBy). The
// record is made before an object reaches the cache, so that every object
// the cache can return has its controller's kind recorded.
func (s *Supervisor) transform(e graph.Entry) toolscache.TransformFunc {
	base := TransformFor(e)
	if e.GroupKind() == graph.PodGroupKind && s.Registry != nil {
		base = TransformPodFor(s.Registry)
	}
	compacted := compactKind(e)
	owners := s.ownerKindsOf(e.GroupKind())
	return func(in any) (any, error) {
		if c, ok := in.(*compact.Object); ok {
			return c, nil // transformed already
		}
		out, err := base(in)
		var refs []metav1.OwnerReference
		switch o := out.(type) {
		case *unstructured.Unstructured:
			if o != nil && o.Object != nil {
				refs = o.GetOwnerReferences()
				if compacted && err == nil {
					if c, cerr := compact.New(o); cerr == nil {
						out = c
					}
				}
			}
		case *metav1.PartialObjectMetadata:
			if o != nil {
				refs = o.OwnerReferences
			}
		}
		for i := range refs {
			if refs[i].Controller != nil && *refs[i].Controller {
				owners.add(graph.RefGroupKind(&refs[i]))
				break
			}
		}
		return out, err
	}
}

// ownerKindSet is the set of a kind's controller kinds seen so far. It only
// grows: a superset is always a safe answer for the closure. Closures ask it
// for every kind below every node they visit, and it grows by a few kinds
// in a process's life: a read is one atomic load of a map that is never
// changed once stored; an addition stores a copy.
type ownerKindSet struct {
	mu    sync.Mutex // serialises additions
	kinds atomic.Pointer[map[schema.GroupKind]struct{}]
}

func (s *Supervisor) ownerKindsOf(gk schema.GroupKind) *ownerKindSet {
	if set, ok := s.ownerKinds.Load(gk); ok {
		return set.(*ownerKindSet)
	}
	set, _ := s.ownerKinds.LoadOrStore(gk, newOwnerKindSet())
	return set.(*ownerKindSet)
}

// newOwnerKindSet is an empty record: its map is never nil.
func newOwnerKindSet() *ownerKindSet {
	o := &ownerKindSet{}
	o.kinds.Store(&map[schema.GroupKind]struct{}{})
	return o
}

func (o *ownerKindSet) add(gk schema.GroupKind) {
	if o.has(gk) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.has(gk) {
		return
	}
	next := maps.Clone(*o.kinds.Load())
	next[gk] = struct{}{}
	o.kinds.Store(&next)
}

func (o *ownerKindSet) has(gk schema.GroupKind) bool {
	_, ok := (*o.kinds.Load())[gk]
	return ok
}
