package scan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/compact"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// heldObject is an object read from a file as the scan holds it: its
// identity (apiVersion, kind and metadata) decoded, since naming, owner
// resolution and the walk read and change it, and the rest of it compact
// (pkg/core/compact: its JSON), inflated on every whole read
// (graph.MemoryStore). A decoded object costs many times its JSON for specs
// of many small nested objects; held so, the objects of a large input cost
// little more than their bytes, and only the one being reported is decoded.
type heldObject struct {
	unstructured.Unstructured
	rest *compact.Object
}

var _ graph.Inflater = (*heldObject)(nil)

// hold returns the held form of u, or nil when u is better kept as it is:
// pods (the closure reads them whole, for their status), namespaces (their
// labels are read), and kinds no adapter declares as tracked or walk-only
// (referenced and generic kinds are read whole by their readers).
func hold(reg *graph.Registry, u *unstructured.Unstructured) *heldObject {
	gk := u.GroupVersionKind().GroupKind()
	if gk == graph.PodGroupKind || gk == namespaceGK {
		return nil
	}
	if e, ok := reg.Lookup(gk); !ok || e.Generic() {
		return nil
	}
	id := identity(u)
	rest := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if _, inID := id.Object[k]; !inID {
			rest[k] = v
		}
	}
	c, err := compact.New(&unstructured.Unstructured{Object: rest})
	if err != nil {
		return nil // a value JSON cannot hold: kept decoded
	}
	return &heldObject{Unstructured: *id, rest: c}
}

// Inflate implements graph.Inflater: the whole object, a new one each time.
func (h *heldObject) Inflate() (client.Object, error) {
	whole, err := h.rest.Unstructured()
	if err != nil {
		return nil, err
	}
	for k, v := range h.Object {
		whole.Object[k] = runtime.DeepCopyJSONValue(v)
	}
	return whole, nil
}

// DeepCopyObject keeps the held form: the identity copied, the immutable
// rest shared.
func (h *heldObject) DeepCopyObject() runtime.Object {
	return &heldObject{Unstructured: *h.Unstructured.DeepCopy(), rest: h.rest}
}
