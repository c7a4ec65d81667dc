package graph

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/generic"
)

// GenericAdapterName is the name under which the registry lists the kinds
// no adapter declares that the controller found as controller owners (the
// generic roots' kinds). No adapter may take it.
const GenericAdapterName = "generic"

// genericKinds is the core's reader of kinds no adapter declares: their
// objects are read whole (generic.Scrape finds the pod templates and pod
// specs in any spec) and they connect owners to descendants like walk-only
// kinds; the topmost of a chain of them is a generic root.
type genericKinds struct{}

func (genericKinds) Name() string { return GenericAdapterName }

func (genericKinds) Kinds() []adapter.Kind { return nil }

func (genericKinds) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	return generic.Scrape(ctx, obj)
}

// GenericAdapter is the adapter that scrapes generic roots: objects of kinds
// no adapter declares, bare Pods, and walk-only objects at the top of a
// controller chain.
func GenericAdapter() adapter.Adapter { return genericKinds{} }

// PodReadWhole reports whether a pod with this controller reference (nil:
// nothing controls it) may be scraped itself, as a generic root or as part
// of one: no controller, or a controller of a kind no adapter declares (a
// generic kind, or one only the reference names). A pod controlled by a
// declared kind (a ReplicaSet's, a StatefulSet's, a Job's) is read through
// its workload's template. The pod cache keeps such a pod's spec and model
// annotations, and their changes are reconciled.
func (r *Registry) PodReadWhole(controller *metav1.OwnerReference) bool {
	if controller == nil {
		return true
	}
	e, ok := r.Lookup(RefGroupKind(controller))
	return !ok || e.Generic()
}

// Generic reports whether the kind was registered by the core because it was
// found as a controller owner while no adapter declares it.
func (e Entry) Generic() bool {
	return e.Adapter != nil && e.Adapter.Name() == GenericAdapterName
}

// GenericEntry is the entry a generic root of kind gvk is reconciled with
// when its kind is not registered (or not readable): it scrapes through the
// generic adapter.
func GenericEntry(gvk schema.GroupVersionKind, resource string) Entry {
	return Entry{
		Kind:    adapter.Kind{Group: gvk.Group, Kind: gvk.Kind, Resource: resource, Versions: []string{gvk.Version}, Role: adapter.RoleWalkOnly},
		Adapter: genericKinds{},
		Version: gvk.Version,
	}
}

// MaxUnknownOwnerKinds bounds the undeclared owner kinds the registry notes
// (and the watches resolve) per process.
const MaxUnknownOwnerKinds = 256

// unknownOwners records the controller-owner kinds the walk met that no
// adapter declares, with the version the first reference named, so that the
// watches can start reading them (lazily: only kinds that actually control
// something in an opted-in namespace).
type unknownOwners struct {
	mu   sync.Mutex
	seen map[schema.GroupKind]string
	// clusterScoped holds the owner kinds found cluster-scoped: the walk
	// ends below their objects.
	clusterScoped map[schema.GroupKind]bool
	notify        func()
	pending       []schema.GroupVersionKind
}

// SetUnknownOwnerHook sets the function called (without locks held) the
// first time a controller owner of an undeclared kind is met.
func (r *Registry) SetUnknownOwnerHook(f func()) {
	r.unknown.mu.Lock()
	r.unknown.notify = f
	r.unknown.mu.Unlock()
}

// NoteUnknownOwner records that a controller ownerReference names a kind no
// adapter declares (apiVersion as the reference gives it). The first time a
// kind is noted, the hook set by SetUnknownOwnerHook runs.
func (r *Registry) NoteUnknownOwner(gvk schema.GroupVersionKind) {
	r.unknown.mu.Lock()
	if r.unknown.seen == nil {
		r.unknown.seen = map[schema.GroupKind]string{}
	}
	if _, ok := r.unknown.seen[gvk.GroupKind()]; ok || len(r.unknown.seen) >= MaxUnknownOwnerKinds {
		// Known already, or past the bound: a tenant who can write
		// ownerReferences can name any number of kinds, and each one noted
		// costs discovery and memory. Owners past it stay unread roots.
		r.unknown.mu.Unlock()
		return
	}
	r.unknown.seen[gvk.GroupKind()] = gvk.Version
	r.unknown.pending = append(r.unknown.pending, gvk)
	notify := r.unknown.notify
	r.unknown.mu.Unlock()
	if notify != nil {
		notify()
	}
}

// UnknownOwnerVersion returns the version under which a controller owner of
// an undeclared kind was first referenced.
func (r *Registry) UnknownOwnerVersion(gk schema.GroupKind) (string, bool) {
	r.unknown.mu.Lock()
	defer r.unknown.mu.Unlock()
	v, ok := r.unknown.seen[gk]
	return v, ok
}

// TakeUnknownOwners returns the undeclared owner kinds noted since the last
// call, for the watches to resolve and, where the controller may, read.
func (r *Registry) TakeUnknownOwners() []schema.GroupVersionKind {
	r.unknown.mu.Lock()
	defer r.unknown.mu.Unlock()
	out := r.unknown.pending
	r.unknown.pending = nil
	return out
}

// AddGenericKind registers a kind no adapter declares, found as a controller
// owner, so that it is watched and walked through. It is a no-op for a kind
// an adapter declares. The kind must be namespaced; k's Role is ignored.
func (r *Registry) AddGenericKind(k adapter.Kind) error {
	k.Role = adapter.RoleWalkOnly
	k.PodOwners = nil
	k.ClusterScoped = false
	if err := k.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changedLocked()
	if _, ok := r.kinds[k.GroupKind()]; ok {
		return nil
	}
	if r.generic == nil {
		r.generic = map[schema.GroupKind]*Entry{}
	}
	if _, ok := r.generic[k.GroupKind()]; !ok {
		r.generic[k.GroupKind()] = &Entry{Kind: k, Adapter: genericKinds{}, Version: k.Versions[0]}
	}
	return nil
}

// forget drops kinds no longer declared from the record of noted kinds, so
// that meeting them again as owners registers them as generic kinds.
func (u *unknownOwners) forget(gks []schema.GroupKind) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, gk := range gks {
		delete(u.seen, gk)
	}
}

// ForgetUnknownOwner forgets that a kind was noted, so that meeting it again
// notes it anew (its resolution failed and is tried again).
func (r *Registry) ForgetUnknownOwner(gk schema.GroupKind) {
	r.unknown.forget([]schema.GroupKind{gk})
}

// MarkClusterScopedOwner records that a controller owner kind no adapter
// declares is cluster-scoped: the walk ends below its objects (a Node owns
// its mirror pods; a cluster-scoped owner groups nothing of one namespace).
func (r *Registry) MarkClusterScopedOwner(gk schema.GroupKind) {
	r.unknown.mu.Lock()
	defer r.unknown.mu.Unlock()
	if r.unknown.clusterScoped == nil {
		r.unknown.clusterScoped = map[schema.GroupKind]bool{}
	}
	r.unknown.clusterScoped[gk] = true
}

// clusterScopedCore are the cluster-scoped core kinds known to own
// namespaced objects (a Node its mirror pods).
var clusterScopedCore = map[schema.GroupKind]bool{{Kind: "Node"}: true, {Kind: "Namespace"}: true, {Kind: "PersistentVolume"}: true}

// ClusterScopedOwner reports whether a kind no adapter declares is known to
// be cluster-scoped.
func (r *Registry) ClusterScopedOwner(gk schema.GroupKind) bool {
	if clusterScopedCore[gk] {
		return true
	}
	r.unknown.mu.Lock()
	defer r.unknown.mu.Unlock()
	return r.unknown.clusterScoped[gk]
}
