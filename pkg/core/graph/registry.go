package graph

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// PodGroupKind is core/v1 Pod, the one kind the core reads for itself: pod
// status carries the running digests.
var PodGroupKind = schema.GroupKind{Group: "", Kind: "Pod"}

// CoreAdapterName is the name under which the registry lists the kinds the
// core declares itself (Pod). No adapter may take it.
const CoreAdapterName = "core"

// podKind is the core's declaration of Pod: walk-only, since pods connect a
// workload to what they control (an LWS leader pod controls its workers'
// StatefulSet), and read for the running digests in their status.
var podKind = adapter.Kind{Group: "", Kind: "Pod", Resource: "pods", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly}

// coreKinds declares the kinds the core owns whatever adapters are enabled:
// it names Pod for the digests, so Pod cannot depend on the apps adapter
// being enabled (--adapters batch plus a plugin would otherwise find no pod).
// It scrapes nothing: none of its kinds is tracked.
type coreKinds struct{}

func (coreKinds) Name() string { return CoreAdapterName }

func (coreKinds) Kinds() []adapter.Kind { return adapter.CloneKinds([]adapter.Kind{podKind}) }

func (coreKinds) Scrape(context.Context, *unstructured.Unstructured) (adapter.Findings, error) {
	return adapter.Findings{}, fmt.Errorf("core: the kinds the core declares are not scraped")
}

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
	// generic holds the kinds no adapter declares that were found as
	// controller owners (AddGenericKind); an adapter's declaration of the
	// same kind takes precedence.
	generic map[schema.GroupKind]*Entry
	unknown unknownOwners
	// gen counts the changes (r.mu held for writing); walked memoizes
	// Entries (every closure and walk asks for it) at a generation.
	gen    atomic.Uint64
	walked atomic.Pointer[entriesMemo]
}

// NewRegistry validates every adapter's declarations and merges them. A kind
// claimed by two adapters (tracked or referenced by both, or tracked by one
// and referenced by the other) is an error that names both. A walk-only
// declaration is not a claim: several adapters may need the same
// intermediate kind for their walks (Knative's Configuration, a JobSet),
// and an adapter that tracks the kind takes it over, reading its objects.
//
// Pod is the core's own kind, registered whatever adapters are enabled. An
// adapter that declares Pod walk-only too (an adapter or plugin built
// before the core owned it) is tolerated: its declaration is ignored.
// Declaring Pod with another role is an error.
func NewRegistry(adapters ...adapter.Adapter) (*Registry, error) {
	r := &Registry{kinds: map[schema.GroupKind]*Entry{}}
	if err := r.add(coreKinds{}); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, a := range adapters {
		if a == nil {
			return nil, fmt.Errorf("registry: nil adapter")
		}
		if a.Name() == CoreAdapterName || a.Name() == GenericAdapterName {
			return nil, fmt.Errorf("registry: adapter name %q is reserved for the kinds the core declares itself (Pod, and kinds no adapter declares); rename the adapter", a.Name())
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
		if gk == PodGroupKind && a.Name() != CoreAdapterName {
			if k.Role != adapter.RoleWalkOnly {
				return fmt.Errorf("registry: adapter %q declares Pod as a %s kind; Pod is the core's own walk-only kind (its status carries the running digests): leave it out of Kinds", a.Name(), k.Role)
			}
			continue // the core's declaration stands
		}
		if prev, ok := r.kinds[gk]; ok {
			switch {
			case k.Role == adapter.RoleWalkOnly && prev.Role == adapter.RoleWalkOnly,
				k.Role == adapter.RoleWalkOnly && prev.Role == adapter.RoleTracked:
				// A walk-only declaration only says the kind is needed for
				// the walk: it is shared, and a tracked claim subsumes it.
				continue
			case k.Role == adapter.RoleTracked && prev.Role == adapter.RoleWalkOnly:
				// The adapter that tracks the kind reads it.
				r.kinds[gk] = &Entry{Kind: k, Adapter: a, Version: k.Versions[0]}
				continue
			}
			return fmt.Errorf("registry: kind %s is claimed by both adapter %q (%s) and adapter %q (%s)", k, prev.Adapter.Name(), prev.Role, a.Name(), k.Role)
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
	if !ok {
		if g, ok := r.generic[gk]; ok {
			return *g, true
		}
		return Entry{}, false
	}
	if e.Role == adapter.RoleReferenced || r.disabled[e.Adapter.Name()] {
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
	if !ok {
		_, ok = r.generic[gk]
		return ok
	}
	return !r.disabled[e.Adapter.Name()]
}

// SetEnabled turns adapters on and off at run time: names lists the
// adapters to keep enabled (nil: all). A name the registry does not hold is
// an error, and nothing changes.
func (r *Registry) SetEnabled(names []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changedLocked()
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
	r.changedLocked()
	e, ok := r.kinds[gk]
	if !ok {
		e, ok = r.generic[gk]
	}
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
//
// The slice is shared between callers until the registry changes: callers
// must not modify it.
func (r *Registry) Entries() []Entry {
	if m := r.walked.Load(); m != nil && m.gen == r.gen.Load() {
		return m.entries
	}
	out, gen := r.entriesAt(func(e *Entry) bool { return e.Role != adapter.RoleReferenced && !r.disabled[e.Adapter.Name()] })
	out = slices.Clip(out)
	r.walked.Store(&entriesMemo{gen: gen, entries: out})
	return out
}

// entriesMemo is Entries as of a registry generation.
type entriesMemo struct {
	gen     uint64
	entries []Entry
}

// changedLocked invalidates the memo of Entries (r.mu held for writing).
func (r *Registry) changedLocked() { r.gen.Add(1) }

// AllEntries returns every registered kind, referenced kinds included: the
// kinds the supervisor watches.
func (r *Registry) AllEntries() []Entry {
	return r.entries(func(*Entry) bool { return true })
}

func (r *Registry) entries(keep func(*Entry) bool) []Entry {
	out, _ := r.entriesAt(keep)
	return out
}

// entriesAt returns the kinds keep keeps, sorted, and the generation they
// are of.
func (r *Registry) entriesAt(keep func(*Entry) bool) ([]Entry, uint64) {
	r.mu.RLock()
	gen := r.gen.Load()
	out := make([]Entry, 0, len(r.kinds)+len(r.generic))
	for _, e := range r.kinds {
		if keep(e) {
			out = append(out, *e)
		}
	}
	for gk, e := range r.generic {
		if _, declared := r.kinds[gk]; !declared && keep(e) {
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
	return out, gen
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

// SetAdapters replaces the registered adapters with list, as NewRegistry
// would register them, while the controller runs (declarative adapters
// loaded from the cluster come and go). On an error (a kind claimed twice, a
// bad declaration) nothing changes. A kind that stays keeps the version the
// cluster was found to serve when its adapter still understands it. It
// returns the kinds added, changed (another adapter, or the same adapter
// value replaced) and removed.
func (r *Registry) SetAdapters(list ...adapter.Adapter) (added, changed, removed []schema.GroupKind, err error) {
	next, err := NewRegistry(list...)
	if err != nil {
		return nil, nil, nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changedLocked()
	for gk, e := range next.kinds {
		old, ok := r.kinds[gk]
		if !ok {
			added = append(added, gk)
			continue
		}
		for _, v := range e.Versions {
			if v == old.Version {
				e.Version = v
			}
		}
		if !sameAdapter(old.Adapter, e.Adapter) || old.Role != e.Role {
			changed = append(changed, gk)
		}
	}
	for gk := range r.kinds {
		if _, ok := next.kinds[gk]; !ok {
			removed = append(removed, gk)
		}
	}
	r.kinds, r.adapters = next.kinds, next.adapters
	r.unknown.forget(removed)
	for gk := range r.generic {
		if _, declared := r.kinds[gk]; declared {
			// An adapter (a profile) declares it now: it reads it.
			delete(r.generic, gk)
		}
	}
	return added, changed, removed, nil
}

// Adapters returns the enabled adapters in the order given.
func (r *Registry) Adapters() []adapter.Adapter {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]adapter.Adapter(nil), r.adapters...)
}

// GroupVersionResourceServed is the resource in the version the core reads.
func (e Entry) GroupVersionResourceServed() schema.GroupVersionResource {
	return e.GVK().GroupVersion().WithResource(e.Resource)
}

// sameAdapter reports whether two adapters are the same value; an adapter
// of a type that cannot be compared counts as changed.
func sameAdapter(a, b adapter.Adapter) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// Referenced returns the entry of a referenced kind, if registered.
func (r *Registry) Referenced(gk schema.GroupKind) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.kinds[gk]
	if !ok || e.Role != adapter.RoleReferenced {
		return Entry{}, false
	}
	return *e, true
}

// ReferencedEntries returns the registered referenced kinds, sorted.
func (r *Registry) ReferencedEntries() []Entry {
	return r.entries(func(e *Entry) bool { return e.Role == adapter.RoleReferenced })
}
