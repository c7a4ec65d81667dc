package watch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Caches that follow opt-in. Ownership never crosses namespaces, so nothing
// outside an opted-in namespace can change a document: each kind keeps one
// cluster-wide watch, and its guarded list-watch (watchguard.go) drops the
// objects of every namespace that has not opted in before they are decoded
// into the informer's store. So the caches hold the opted-in namespaces'
// objects only, whatever the size of the cluster.
//
//   - Opt-in: the namespace is admitted at once (its events reach the
//     caches from then on) and pending; every watched kind lists that
//     namespace once (a namespace-scoped list, fields metadata.namespace)
//     and adds what its cache lacks; then the namespace is ready and its
//     workloads are re-evaluated, as at a cold start.
//   - Opt-out: its objects are removed from every cache at once, and its
//     AIBOMs deleted (NamespaceChanged). An object of a namespace no longer
//     admitted that still reaches a cache (an event in flight, a relist
//     that began before) is removed when its event is handled.
//
// The decision, with the numbers against per-namespace informers, is in
// docs/performance.md ("Caches that follow opt-in").

// fillWait bounds how long filling an opted-in namespace waits for a kind's
// first sync.
const fillWait = time.Minute

// crdSyncWait bounds how long the supervisor's start waits for the CRD
// cache before its first discovery.
const crdSyncWait = 10 * time.Second

// SetNamespaceSelector changes which namespaces opt in (nil: the default,
// aibom.dev/enabled=true). Namespaces that opt in are admitted into the
// caches and reported as at a cold start; those that opt out lose their
// cached objects and their AIBOMs.
func (s *Supervisor) SetNamespaceSelector(sel labels.Selector) {
	s.Namespaces.SetSelector(sel)
}

// FollowNamespaces makes the caches follow the opt-in of the Namespaces
// set: its changes fill or empty them, and re-evaluate the namespace.
func (s *Supervisor) FollowNamespaces() {
	s.Namespaces.OnChange = s.namespaceChanged
	s.Namespaces.OnDelete = s.namespaceDeleted
}

// namespaceChanged is NamespaceSet.OnChange: fill or empty the caches, then
// re-evaluate the namespace's workloads and AIBOMs. A namespace that opted in
// is pending from its admission (NamespaceSet holds it) until it is ready.
func (s *Supervisor) namespaceChanged(name string) {
	p := s.runCtx.Load()
	if p == nil {
		// Not started: the caches start with the set as it is then.
		s.Namespaces.setPending(name, false)
		s.Events.NamespaceChanged(name)
		return
	}
	ctx := *p
	if !s.Namespaces.Admitted(name) {
		s.Namespaces.beginFill(name) // any fill in flight is stale now
		s.Namespaces.setPending(name, false)
		s.purgeNamespace(name)
		s.Events.NamespaceChanged(name)
		return
	}
	s.Namespaces.setPending(name, true)
	gen := s.Namespaces.beginFill(name)
	go func() {
		s.fillNamespace(ctx, name, gen)
		if !s.Namespaces.finishFill(name, gen) {
			// A later opt-in change owns the namespace now: its fill
			// (or its opt-out) decides; this one marks nothing ready.
			if !s.Namespaces.Admitted(name) {
				s.purgeNamespace(name)
			}
			return
		}
		if !s.Namespaces.Admitted(name) {
			s.purgeNamespace(name) // opted out meanwhile
		}
		s.Events.NamespaceChanged(name)
	}()
}

// namespaceDeleted is NamespaceSet.OnDelete.
func (s *Supervisor) namespaceDeleted(name string) { s.purgeNamespace(name) }

// watchedKinds returns the kinds with an informer that admits by namespace.
func (s *Supervisor) watchedKinds() []*kindWatch {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*kindWatch, 0, len(s.kinds))
	for _, kw := range s.kinds {
		if kw.informer != nil && kw.lw != nil && kw.lw.hooks.admit != nil {
			out = append(out, kw)
		}
	}
	return out
}

// fillNamespace lists a newly admitted namespace in every watched kind, in
// parallel, and adds to each cache what it dropped before.
func (s *Supervisor) fillNamespace(ctx context.Context, ns string, gen uint64) {
	var wg sync.WaitGroup
	for _, kw := range s.watchedKinds() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.fillKind(ctx, kw, ns, gen); err != nil {
				s.Log.Error(err, "filling the cache of a namespace that opted in; its events still reach the cache, and the kind's next relist completes it",
					"namespace", ns, "kind", kw.entry.Kind.String())
			}
		}()
	}
	wg.Wait()
}

func (s *Supervisor) fillKind(ctx context.Context, kw *kindWatch, ns string, gen uint64) error {
	// Until its first sync, the kind's initial list may have dropped the
	// namespace's objects, and its end replaces the store: fill after it.
	// A kind whose list fails (an outage) has no list in flight that the
	// admission could have missed: its next successful list includes the
	// namespace.
	deadline := time.Now().Add(fillWait)
	for !kw.synced.Load() {
		if kw.inOutage.Load() {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("kind's cache not synced")
		}
		time.Sleep(20 * time.Millisecond)
	}
	transform := s.transform(kw.entry)
	indexer := kw.informer.GetIndexer()
	// Deletions seen from now on are remembered: a listed object deleted
	// before it is written is not written (and one deleted after is removed
	// by the deletion's handler, admissionHandler).
	kw.fills.begin()
	defer kw.fills.end()
	const rounds = 3
	for round := range rounds {
		// A relist in flight replaces the store when it ends, perhaps
		// without what the fill adds: wait for it, and fill again if one
		// ended meanwhile.
		for kw.listing.Load() > 0 && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		lists := kw.lists.Load()
		list, err := kw.lw.lw.ListWithContext(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.namespace", ns).String()})
		if err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		var added []any
		for _, item := range items {
			if !s.Namespaces.Admitted(ns) || !s.Namespaces.fillCurrent(ns, gen) {
				return nil // opted out, or a newer opt-in fills it
			}
			obj, ok := item.(client.Object)
			if !ok || obj.GetNamespace() != ns || kw.fills.deleted(obj.GetUID()) {
				continue
			}
			if _, exists, err := indexer.Get(obj); err != nil || exists {
				// Present: an event since the admission brought it, and
				// later events keep it current.
				continue
			}
			out, err := transform(obj)
			if err != nil {
				continue
			}
			_ = indexer.Add(out)
			if kw.fills.deleted(obj.GetUID()) {
				_ = indexer.Delete(out) // deleted while being written
				continue
			}
			added = append(added, out)
		}
		if kw.listing.Load() == 0 && kw.lists.Load() == lists {
			return nil
		}
		// A relist ended meanwhile: it may have found deleted what this
		// round's older list still had. What this round added (and no
		// event replaced since) goes; the next round lists again.
		for _, out := range added {
			if round == rounds-1 {
				break // no next round: keep what there is
			}
			if cur, exists, err := indexer.Get(out); err == nil && exists && cur == out {
				_ = indexer.Delete(out)
			}
		}
	}
	return nil
}

// purgeNamespace removes a namespace's objects from every watched kind's
// cache.
func (s *Supervisor) purgeNamespace(ns string) {
	for _, kw := range s.watchedKinds() {
		indexer := kw.informer.GetIndexer()
		objs, err := indexer.ByIndex(toolscache.NamespaceIndex, ns)
		if err != nil {
			continue
		}
		for _, o := range objs {
			_ = indexer.Delete(o)
		}
	}
}

// admissionHandler removes from a kind's cache an object of a namespace that
// is not admitted (any more): one that was in flight when its namespace
// opted out, or came with a relist that began before.
func (s *Supervisor) admissionHandler(kw *kindWatch) toolscache.ResourceEventHandler {
	drop := func(obj any) {
		o, ok := obj.(client.Object)
		if !ok || o.GetNamespace() == "" || s.Namespaces.Admitted(o.GetNamespace()) {
			return
		}
		_ = kw.informer.GetIndexer().Delete(o)
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    drop,
		UpdateFunc: func(_, n any) { drop(n) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			o, err := meta.Accessor(obj)
			if err != nil || o.GetNamespace() == "" {
				return
			}
			kw.fills.noteDeleted(o.GetUID())
			// An opt-in fill may have written the object back from a
			// list older than its deletion (delete notifications reach
			// handlers after the store is updated): remove it again, by
			// UID (a re-created object under the name stays).
			indexer := kw.informer.GetIndexer()
			if cur, exists, err := indexer.GetByKey(o.GetNamespace() + "/" + o.GetName()); err == nil && exists {
				if c, err := meta.Accessor(cur); err == nil && c.GetUID() == o.GetUID() {
					_ = indexer.Delete(cur)
				}
			}
		},
	}
}

// fillTracker counts a kind's opt-in fills in flight and, while there is
// one, remembers the UIDs of the objects deleted: a fill never writes back
// an object deleted after its list.
type fillTracker struct {
	mu      sync.Mutex
	active  int
	deletes map[types.UID]bool
}

func (f *fillTracker) begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.active++
}

func (f *fillTracker) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active--; f.active == 0 {
		f.deletes = nil
	}
}

func (f *fillTracker) noteDeleted(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active == 0 || uid == "" {
		return
	}
	if f.deletes == nil {
		f.deletes = map[types.UID]bool{}
	}
	f.deletes[uid] = true
}

func (f *fillTracker) deleted(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deletes[uid]
}

// beginFill starts a new opt-in generation of a namespace and returns it:
// fills of older generations no longer mark it ready.
func (s *NamespaceSet) beginFill(namespace string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fills == nil {
		s.fills = map[string]uint64{}
	}
	s.fills[namespace]++
	return s.fills[namespace]
}

// fillCurrent reports whether gen is the namespace's latest opt-in
// generation.
func (s *NamespaceSet) fillCurrent(namespace string, gen uint64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fills[namespace] == gen
}

// finishFill marks the namespace ready when gen is still its latest opt-in
// generation, and reports whether it was.
func (s *NamespaceSet) finishFill(namespace string, gen uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fills[namespace] != gen {
		return false
	}
	delete(s.pending, namespace)
	return true
}

// CachedObjects returns how many objects each watched kind's cache holds in
// a namespace (every namespace for metav1.NamespaceAll), by kind: what the
// caches cost, for tests and measurements.
func (s *Supervisor) CachedObjects(namespace string) map[string]int {
	out := map[string]int{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for gk, kw := range s.kinds {
		if kw.informer == nil {
			continue
		}
		if namespace == metav1.NamespaceAll {
			out[gk.String()] = len(kw.informer.GetIndexer().ListKeys())
			continue
		}
		objs, err := kw.informer.GetIndexer().ByIndex(toolscache.NamespaceIndex, namespace)
		if err == nil {
			out[gk.String()] = len(objs)
		}
	}
	return out
}

// cachedObjectsDesc describes aibom_cached_objects.
var cachedObjectsDesc = prometheus.NewDesc("aibom_cached_objects",
	"Objects held in the informer cache of each watched kind: only those of opted-in namespaces (and cluster-scoped referenced kinds).",
	[]string{"kind"}, nil)

// cacheCollector reports the cache sizes of the running supervisor at
// scrape time.
type cacheCollector struct{ sup atomic.Pointer[Supervisor] }

var cachedObjects = &cacheCollector{}

func init() { metrics.Registry.MustRegister(cachedObjects) }

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) { ch <- cachedObjectsDesc }

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.sup.Load()
	if s == nil {
		return
	}
	for kind, n := range s.CachedObjects(metav1.NamespaceAll) {
		ch <- prometheus.MustNewConstMetric(cachedObjectsDesc, prometheus.GaugeValue, float64(n), kind)
	}
}
