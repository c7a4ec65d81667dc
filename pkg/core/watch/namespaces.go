package watch

import (
	"sort"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// NamespaceSet is the event path's enqueue filter: the namespaces that have
// opted in (whose labels match the selector), kept from the namespace
// informer's events (a map lookup per event, no read). It also announces
// opt-in changes (OnChange), after the set has changed: an event dropped just
// before is of an object already in its cache, which the announcement's
// re-evaluation lists.
//
// A namespace that just opted in may be pending: selected (its objects are
// admitted into the caches, Admitted) while the caches are being filled
// with what they dropped before; OptedIn is false until it is ready, so that
// no root of it is reconciled on a half-filled cache.
type NamespaceSet struct {
	mu      sync.RWMutex
	in      map[string]bool
	pending map[string]bool
	labels  map[string]map[string]string
	// fills is each namespace's opt-in generation (optin.go): bumped by
	// every opt-in change, so that a fill started before the latest change
	// never marks the namespace ready.
	fills    map[string]uint64
	selector labels.Selector
	synced   toolscache.InformerSynced
	// OnChange is called with a namespace whose opt-in changed (opted in
	// when created, its labels or the selector changed); may be nil.
	OnChange func(namespace string)
	// OnDelete is called with an opted-in namespace that was deleted (its
	// objects went before it); may be nil.
	OnDelete func(namespace string)
}

// NewNamespaceSet returns an empty set with the default selector.
func NewNamespaceSet() *NamespaceSet {
	return &NamespaceSet{in: map[string]bool{}, pending: map[string]bool{}, labels: map[string]map[string]string{}, fills: map[string]uint64{},
		selector: graph.DefaultNamespaceSelector()}
}

// OptedIn reports whether a namespace has opted in and its caches are
// ready; a nil set lets every namespace through.
func (s *NamespaceSet) OptedIn(namespace string) bool {
	if s == nil {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.in[namespace] && !s.pending[namespace]
}

// Admitted reports whether a namespace's objects belong in the caches: it
// opted in, ready or pending. A nil set admits every namespace.
func (s *NamespaceSet) Admitted(namespace string) bool {
	if s == nil {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.in[namespace]
}

// Selects reports whether a namespace with these labels opts in under the
// current selector.
func (s *NamespaceSet) Selects(nsLabels map[string]string) bool {
	if s == nil {
		return graph.DefaultNamespaceSelector().Matches(labels.Set(nsLabels))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.selector.Matches(labels.Set(nsLabels))
}

// SetSelector replaces the selector of opted-in namespaces (nil: the
// default) and announces every namespace whose opt-in changed.
func (s *NamespaceSet) SetSelector(sel labels.Selector) {
	if sel == nil {
		sel = graph.DefaultNamespaceSelector()
	}
	var changed []string
	s.mu.Lock()
	s.selector = sel
	for name, l := range s.labels {
		in := sel.Matches(labels.Set(l))
		if in != s.in[name] {
			changed = append(changed, name)
			if in {
				s.in[name] = true
				s.holdLocked(name)
			} else {
				delete(s.in, name)
			}
		}
	}
	s.mu.Unlock()
	sort.Strings(changed)
	if s.OnChange != nil {
		for _, name := range changed {
			s.OnChange(name)
		}
	}
}

// holdLocked marks a namespace that just opted in as pending, in the same
// step as its admission, when OnChange will fill its caches and then mark it
// ready: no event of it passes OptedIn before that (s.mu held).
func (s *NamespaceSet) holdLocked(namespace string) {
	if s.OnChange != nil {
		s.pending[namespace] = true
	}
}

// setPending marks a namespace as being filled (true) or ready (false).
func (s *NamespaceSet) setPending(namespace string, pending bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pending {
		s.pending[namespace] = true
	} else {
		delete(s.pending, namespace)
	}
}

// SetSynced gives the set its informer's sync state (Synced).
func (s *NamespaceSet) SetSynced(synced toolscache.InformerSynced) { s.synced = synced }

// Synced reports whether the set has seen every namespace once.
func (s *NamespaceSet) Synced() bool { return s == nil || s.synced == nil || s.synced() }

func (s *NamespaceSet) set(obj any) {
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	s.mu.Lock()
	in := s.selector.Matches(labels.Set(o.GetLabels()))
	changed := s.in[o.GetName()] != in
	s.labels[o.GetName()] = o.GetLabels()
	if in {
		if changed {
			s.holdLocked(o.GetName())
		}
		s.in[o.GetName()] = true
	} else {
		delete(s.in, o.GetName())
	}
	s.mu.Unlock()
	if changed && s.OnChange != nil {
		s.OnChange(o.GetName())
	}
}

// Handler keeps the set from a namespace informer.
func (s *NamespaceSet) Handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    s.set,
		UpdateFunc: func(_, n any) { s.set(n) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if o, ok := obj.(client.Object); ok {
				s.mu.Lock()
				was := s.in[o.GetName()]
				delete(s.in, o.GetName())
				delete(s.pending, o.GetName())
				delete(s.labels, o.GetName())
				s.mu.Unlock()
				if was && s.OnDelete != nil {
					s.OnDelete(o.GetName())
				}
			}
		},
	}
}
