package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// References beside ownership (adapter.RoleReferenced): a root's scrape
// looks objects up by kind and name through an adapter.Resolver; the core
// records every lookup (GatherInputs), lists it in the document, keeps it in
// the input hash (a referenced object's relevant content reaches the
// findings, and the lookup's outcome is part of the input), and re-reconciles
// the roots that used an object when it changes (ReferenceIndex).

// StoreResolver resolves the references of roots in one namespace from a
// Store (the supervisor's caches in the controller). A namespaced kind is
// read in Namespace only, a cluster-scoped one at cluster scope: a root
// can never make the controller read another namespace's objects.
type StoreResolver struct {
	Registry  *graph.Registry
	Store     graph.Store
	Namespace string
}

// Resolve implements adapter.Resolver.
func (s StoreResolver) Resolve(ctx context.Context, ref adapter.Reference) (*unstructured.Unstructured, error) {
	e, ok := s.Registry.Referenced(ref.GroupKind())
	if !ok {
		return nil, &adapter.ReferenceError{Reference: ref, Reason: adapter.ReasonUndeclared}
	}
	ns := s.Namespace
	if e.ClusterScoped {
		ns = ""
	}
	obj, err := s.Store.Get(ctx, e, ns, ref.Name)
	if err != nil {
		return nil, &adapter.ReferenceError{Reference: ref, Reason: ReferenceReason(err), Err: err}
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, &adapter.ReferenceError{Reference: ref, Reason: adapter.ReasonUnavailable, Err: fmt.Errorf("%T read for %s", obj, e.Kind)}
	}
	return adapter.ReferencedView(u), nil
}

// ReferenceReason classifies a read error of a referenced object.
func ReferenceReason(err error) string {
	switch {
	case apierrors.IsNotFound(err):
		return adapter.ReasonNotFound
	case apierrors.IsForbidden(err):
		return adapter.ReasonForbidden
	case meta.IsNoMatchError(err), errors.Is(err, graph.ErrKindNotReady):
		return adapter.ReasonNotServed
	default:
		return adapter.ReasonUnavailable
	}
}

// recordingResolver checks and records every lookup of one scrape. A kind
// the scraping adapter did not declare as referenced is refused
// (ReasonUndeclared) without reading anything.
type recordingResolver struct {
	next      adapter.Resolver
	adapter   adapter.Adapter
	namespace string

	mu   sync.Mutex
	uses []document.Reference
}

func newRecordingResolver(ctx context.Context, a adapter.Adapter, namespace string) *recordingResolver {
	return &recordingResolver{next: adapter.ResolverFrom(ctx), adapter: a, namespace: namespace}
}

func (r *recordingResolver) Resolve(ctx context.Context, ref adapter.Reference) (*unstructured.Unstructured, error) {
	use := document.Reference{Group: ref.Group, Kind: ref.Kind, Name: ref.Name, Locator: ref.Locator, Namespace: r.namespace}
	var obj *unstructured.Unstructured
	var err error
	if k, ok := declaredReferenced(r.adapter, ref.GroupKind()); !ok {
		err = &adapter.ReferenceError{Reference: ref, Reason: adapter.ReasonUndeclared}
	} else {
		if k.ClusterScoped {
			use.Namespace = ""
		}
		obj, err = r.next.Resolve(ctx, ref)
	}
	if err != nil {
		use.Unresolved = adapter.UnresolvedReason(err)
		obj = nil
	}
	r.mu.Lock()
	r.uses = append(r.uses, use)
	r.mu.Unlock()
	return obj, err
}

// references returns the recorded lookups, sorted, without repeats.
func (r *recordingResolver) references() []document.Reference {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.uses)
	slices.SortFunc(out, func(a, b document.Reference) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace),
			strings.Compare(a.Name, b.Name), strings.Compare(a.Locator, b.Locator), strings.Compare(a.Unresolved, b.Unresolved))
	})
	return slices.Compact(out)
}

func declaredReferenced(a adapter.Adapter, gk schema.GroupKind) (adapter.Kind, bool) {
	if a == nil {
		return adapter.Kind{}, false
	}
	for _, k := range a.Kinds() {
		if k.Role == adapter.RoleReferenced && k.GroupKind() == gk {
			return k, true
		}
	}
	return adapter.Kind{}, false
}

// redactReferences returns the references for the document: their names
// and locators come from the root's spec, and are masked like every value
// a scraper reports.
func redactReferences(refs []document.Reference) []document.Reference {
	if len(refs) == 0 {
		return nil
	}
	out := make([]document.Reference, len(refs))
	for i, r := range refs {
		r.Name, _ = podtemplate.Redact(r.Name)
		r.Locator, _ = podtemplate.Redact(r.Locator)
		out[i] = r
	}
	return out
}

// referenceKey identifies one referenced object; Namespace is empty for a
// cluster-scoped kind.
type referenceKey struct {
	schema.GroupKind
	Namespace, Name string
}

// ReferenceIndex maps each referenced object to the roots whose last
// reconcile looked it up, so that a change to the object re-reconciles
// exactly those roots (an index lookup, not a scan). The zero value is not
// usable; a nil *ReferenceIndex ignores updates and finds no roots.
type ReferenceIndex struct {
	mu     sync.RWMutex
	byRef  map[referenceKey]map[Request]struct{}
	byRoot map[Request][]referenceKey
}

// NewReferenceIndex returns an empty index.
func NewReferenceIndex() *ReferenceIndex {
	return &ReferenceIndex{byRef: map[referenceKey]map[Request]struct{}{}, byRoot: map[Request][]referenceKey{}}
}

// Set replaces the references a root used with those of its latest
// reconcile, resolved or not: a reference to an object that does not exist
// yet is kept, so that creating it re-reconciles the root.
func (x *ReferenceIndex) Set(root Request, refs []document.Reference) {
	if x == nil {
		return
	}
	keys := make([]referenceKey, 0, len(refs))
	for _, r := range refs {
		keys = append(keys, referenceKey{GroupKind: schema.GroupKind{Group: r.Group, Kind: r.Kind}, Namespace: r.Namespace, Name: r.Name})
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.forget(root)
	if len(keys) == 0 {
		return
	}
	x.byRoot[root] = keys
	for _, k := range keys {
		roots := x.byRef[k]
		if roots == nil {
			roots = map[Request]struct{}{}
			x.byRef[k] = roots
		}
		roots[root] = struct{}{}
	}
}

// Forget drops a root that is no longer reported (deleted, rolled up, its
// namespace opted out).
func (x *ReferenceIndex) Forget(root Request) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.forget(root)
}

func (x *ReferenceIndex) forget(root Request) {
	for _, k := range x.byRoot[root] {
		if roots := x.byRef[k]; roots != nil {
			delete(roots, root)
			if len(roots) == 0 {
				delete(x.byRef, k)
			}
		}
	}
	delete(x.byRoot, root)
}

// Roots returns the roots that used the object, sorted.
func (x *ReferenceIndex) Roots(gk schema.GroupKind, namespace, name string) []Request {
	if x == nil {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	roots := x.byRef[referenceKey{GroupKind: gk, Namespace: namespace, Name: name}]
	out := make([]Request, 0, len(roots))
	for r := range roots {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Request) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Len returns the number of roots with references.
func (x *ReferenceIndex) Len() int {
	if x == nil {
		return 0
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.byRoot)
}

// enqueueReferrers enqueues the roots that used a referenced object at their
// last reconcile: the event path of referenced kinds.
func (m EventMapper) enqueueReferrers(e graph.Entry, obj client.Object, q adder) {
	ns := obj.GetNamespace()
	if e.ClusterScoped {
		ns = ""
	}
	for _, root := range m.References.Roots(e.GroupKind(), ns, obj.GetName()) {
		q.Add(root)
	}
}

// withResolver returns the context a root's reconcile scrapes with: its
// references resolve from the reconciler's store, in the root's namespace.
func (r *Reconciler) withResolver(ctx context.Context, namespace string) context.Context {
	return adapter.WithResolver(ctx, StoreResolver{Registry: r.Registry, Store: r.Store, Namespace: namespace})
}

// forgetsReferences reports whether a reconcile outcome means the workload
// is no longer a root whose references matter.
func forgetsReferences(outcome string) bool {
	return outcome == OutcomeDeleted || outcome == OutcomeRolledUp || outcome == OutcomeNotOptedIn || outcome == OutcomeAdapterDisabled
}
