package core

import (
	"sort"
	"sync"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RootCache remembers, per object UID, what one ownership level above it
// resolved to (the next OpRootOf, the root's reconcile, or nothing), so that
// the frequent events (a pod's running image changing) skip the walk, and a
// climb through cached levels costs one queue item. A level is valid until
// an ownership change in its namespace: a deletion, an ownerReference or UID
// change, an opt-in change (levels a creation could change are not cached).
// Each namespace has its own epoch, so one tenant's churn does not
// invalidate another's levels.
//
// It also remembers which roots' closures passed through objects read live
// (the get/list fallback), which raise no events: when such an object is
// found gone, the root it belonged to is re-evaluated.
type RootCache struct {
	mu     sync.Mutex
	epochs map[string]uint64
	levels map[types.UID]cachedLevel
	// reach: a live-read object's UID -> the root whose closure last passed
	// through it; byRoot: the UIDs each root reached, replaced per closure.
	reach  map[types.UID]Request
	byRoot map[Request][]types.UID
}

type cachedLevel struct {
	namespace string
	epoch     uint64
	next      *Request
}

// maxCachedLevels bounds the cache: it is cleared when full (levels of
// deleted objects are otherwise never evicted).
const maxCachedLevels = 1 << 17

// NewRootCache returns an empty cache.
func NewRootCache() *RootCache {
	return &RootCache{epochs: map[string]uint64{}, levels: map[types.UID]cachedLevel{},
		reach: map[types.UID]Request{}, byRoot: map[Request][]types.UID{}}
}

// invalidate drops every level of a namespace (constant time).
func (c *RootCache) invalidate(namespace string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.epochs[namespace]++
	c.mu.Unlock()
}

func (c *RootCache) epoch(namespace string) uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epochs[namespace]
}

// level returns the cached level of uid, if still valid.
func (c *RootCache) level(namespace string, uid types.UID) (*Request, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.levels[uid]
	if !ok || l.namespace != namespace || l.epoch != c.epochs[namespace] {
		return nil, false
	}
	return l.next, true
}

// remember caches a level resolved from reads made after epoch was taken;
// an invalidation meanwhile discards it.
func (c *RootCache) remember(namespace string, uid types.UID, epoch uint64, next *Request) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epochs[namespace] != epoch {
		return
	}
	if len(c.levels) >= maxCachedLevels {
		c.levels = map[types.UID]cachedLevel{}
	}
	c.levels[uid] = cachedLevel{namespace: namespace, epoch: epoch, next: next}
}

// rememberReach records the live-read objects a root's closure passed
// through, replacing what the root's previous closure recorded.
func (c *RootCache) rememberReach(root Request, uids []types.UID) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, uid := range c.byRoot[root] {
		if c.reach[uid] == root {
			delete(c.reach, uid)
		}
	}
	if len(uids) == 0 {
		delete(c.byRoot, root)
		return
	}
	c.byRoot[root] = uids
	for _, uid := range uids {
		c.reach[uid] = root
	}
}

// reachedFrom returns the root whose closure last passed through a
// live-read object.
func (c *RootCache) reachedFrom(uid types.UID) (Request, bool) {
	if c == nil {
		return Request{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reach[uid]
	return r, ok
}

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
	mu       sync.RWMutex
	in       map[string]bool
	pending  map[string]bool
	labels   map[string]map[string]string
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
	return &NamespaceSet{in: map[string]bool{}, pending: map[string]bool{}, labels: map[string]map[string]string{},
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
