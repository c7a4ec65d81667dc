package reconcile

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
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
