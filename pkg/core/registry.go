package core

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// PodGroupKind is core/v1 Pod, the one kind the core reads for itself: pod
// status carries the running digests.
var PodGroupKind = schema.GroupKind{Group: "", Kind: "Pod"}

// Entry is one registered kind and the adapter that declared it.
type Entry struct {
	adapter.Kind
	// Adapter declared the kind and scrapes it when it is tracked.
	Adapter adapter.Adapter
	// Version is the version the core reads the kind in: the adapter's most
	// preferred version unless the registry was told which version the
	// cluster serves (SetServedVersion).
	Version string
}

// GVK is the group, version and kind the core reads the kind in.
func (e Entry) GVK() schema.GroupVersionKind { return e.GroupKind().WithVersion(e.Version) }

// Tracked reports whether the kind is a tracked workload kind.
func (e Entry) Tracked() bool { return e.Role == adapter.RoleTracked }

// Registry merges the kinds of the enabled adapters into one table.
type Registry struct {
	adapters []adapter.Adapter
	mu       sync.RWMutex // guards the entries' served versions and disabled
	kinds    map[schema.GroupKind]*Entry
	// disabled holds the adapters turned off at run time (SetEnabled): their
	// kinds read as not registered to the walk, the closure and the
	// reconciler, exactly as after a restart without them, while the
	// supervisor keeps watching them (AllEntries), so that turning one back
	// on needs no new watch.
	disabled map[string]bool
}

// NewRegistry validates every adapter's declarations and merges them. A kind
// claimed by two adapters is an error that names both.
func NewRegistry(adapters ...adapter.Adapter) (*Registry, error) {
	r := &Registry{kinds: map[schema.GroupKind]*Entry{}}
	names := map[string]bool{}
	for _, a := range adapters {
		if a == nil {
			return nil, fmt.Errorf("registry: nil adapter")
		}
		if names[a.Name()] {
			return nil, fmt.Errorf("registry: adapter %q enabled twice", a.Name())
		}
		names[a.Name()] = true
		if err := r.add(a); err != nil {
			return nil, err
		}
		r.adapters = append(r.adapters, a)
	}
	return r, nil
}

func (r *Registry) add(a adapter.Adapter) error {
	for _, k := range a.Kinds() {
		if err := k.Validate(); err != nil {
			return fmt.Errorf("registry: adapter %q: %w", a.Name(), err)
		}
		gk := k.GroupKind()
		if prev, ok := r.kinds[gk]; ok {
			return fmt.Errorf("registry: kind %s is claimed by both adapter %q and adapter %q", k, prev.Adapter.Name(), a.Name())
		}
		r.kinds[gk] = &Entry{Kind: k, Adapter: a, Version: k.Versions[0]}
	}
	return nil
}

// Lookup returns the entry of a tracked or walk-only kind, if registered:
// the kinds of the ownership graph. Referenced kinds are not part of it (the
// walk and the closure never pass through them); see Referenced.
func (r *Registry) Lookup(gk schema.GroupKind) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.kinds[gk]
	if !ok || e.Role == adapter.RoleReferenced || r.disabled[e.Adapter.Name()] {
		return Entry{}, false
	}
	return *e, true
}

// IsTracked reports whether a kind is registered as tracked. Tracked means
// registered, regardless of the current health of the kind's watch, so that
// suppression stays stable through an outage.
func (r *Registry) IsTracked(gk schema.GroupKind) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.kinds[gk]
	return ok && e.Role == adapter.RoleTracked && !r.disabled[e.Adapter.Name()]
}

// Registered reports whether a kind is registered, whatever its role.
func (r *Registry) Registered(gk schema.GroupKind) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.kinds[gk]
	return ok && !r.disabled[e.Adapter.Name()]
}

// SetEnabled turns adapters on and off at run time: names lists the
// adapters to keep enabled (nil: all). A name the registry does not hold is
// an error, and nothing changes.
func (r *Registry) SetEnabled(names []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if names == nil {
		r.disabled = nil
		return nil
	}
	keep := map[string]bool{}
	for _, n := range names {
		found := false
		for _, a := range r.adapters {
			found = found || a.Name() == n
		}
		if !found {
			return fmt.Errorf("adapter %q is not loaded by this controller (loaded: %s)", n, strings.Join(r.adapterNames(), ", "))
		}
		keep[n] = true
	}
	disabled := map[string]bool{}
	for _, a := range r.adapters {
		if !keep[a.Name()] {
			disabled[a.Name()] = true
		}
	}
	r.disabled = disabled
	return nil
}

// Disabled reports whether a kind belongs to an adapter turned off at run
// time: its AIBOMs are deleted.
func (r *Registry) Disabled(gk schema.GroupKind) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.kinds[gk]
	return ok && r.disabled[e.Adapter.Name()]
}

func (r *Registry) adapterNames() []string {
	out := make([]string, 0, len(r.adapters))
	for _, a := range r.adapters {
		out = append(out, a.Name())
	}
	return out
}

// SetServedVersion records the version the cluster serves for a kind, chosen
// by version negotiation. It is an error to pick a version the adapter did not
// declare.
func (r *Registry) SetServedVersion(gk schema.GroupKind, version string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.kinds[gk]
	if !ok {
		return fmt.Errorf("registry: kind %s is not registered", gk)
	}
	for _, v := range e.Versions {
		if v == version {
			e.Version = version
			return nil
		}
	}
	return fmt.Errorf("registry: adapter %q does not understand %s in version %s", e.Adapter.Name(), gk, version)
}

// Entries returns every registered tracked and walk-only kind (the
// ownership graph's), sorted by group then kind.
func (r *Registry) Entries() []Entry {
	return r.entries(func(e *Entry) bool { return e.Role != adapter.RoleReferenced && !r.disabled[e.Adapter.Name()] })
}

// AllEntries returns every registered kind, referenced kinds included: the
// kinds the supervisor watches.
func (r *Registry) AllEntries() []Entry {
	return r.entries(func(*Entry) bool { return true })
}

func (r *Registry) entries(keep func(*Entry) bool) []Entry {
	r.mu.RLock()
	out := make([]Entry, 0, len(r.kinds))
	for _, e := range r.kinds {
		if keep(e) {
			out = append(out, *e)
		}
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Kind.Kind < out[j].Kind.Kind
	})
	return out
}

// TrackedEntries returns the tracked kinds, sorted.
func (r *Registry) TrackedEntries() []Entry {
	var out []Entry
	for _, e := range r.Entries() {
		if e.Tracked() {
			out = append(out, e)
		}
	}
	return out
}

// Adapters returns the enabled adapters in the order given.
func (r *Registry) Adapters() []adapter.Adapter { return append([]adapter.Adapter(nil), r.adapters...) }

// GroupVersionResourceServed is the resource in the version the core reads.
func (e Entry) GroupVersionResourceServed() schema.GroupVersionResource {
	return e.GVK().GroupVersion().WithResource(e.Resource)
}
