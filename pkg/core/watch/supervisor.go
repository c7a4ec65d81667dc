package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Supervisor watches every registered kind only while the cluster serves
// it (Design 004): presence is discovered at start-up and while running, each
// kind gets its own informer cache (so that one kind's broken list or watch
// never blocks another kind or the manager), the adapter's most preferred
// served version is used, and health is visible as metrics, Events and logs.
//
// The Supervisor is also the Store of the walk, the closure and the
// reconciler: a kind whose cache has synced once is read from it even while
// its watch is unhealthy, so suppression stays stable through an outage.
type Supervisor struct {
	Registry *graph.Registry
	// Config is the REST config for the kinds' caches, discovery and probes.
	Config *rest.Config
	// Scheme is passed to the kinds' caches.
	Scheme *runtime.Scheme
	// Namespaces is the set of opted-in namespaces the caches follow (kept
	// from the namespace informer); nil admits every namespace.
	Namespaces *NamespaceSet
	// Events receives what the informers see (the reconcile loop's event
	// mapper, bound to the controller's queue).
	Events Events
	// Recorder emits one Event per health transition; may be nil.
	Recorder events.EventRecorder
	// Interval is how often presence is re-discovered and the kinds read
	// live probed while something needs polling: CustomResourceDefinitions
	// cannot be watched, the last discovery failed, or a kind is on the
	// live-read fallback (default 30s). Otherwise nothing is polled:
	// discovery runs when a registered kind's CRD changes, and a watch that
	// stops silently is caught by its progress deadline (watchguard.go).
	Interval time.Duration
	// WatchProgressDeadline is how long a kind's watch may deliver neither
	// an event nor a bookmark before it is restarted (default
	// DefaultWatchProgressDeadline; negative: never).
	WatchProgressDeadline time.Duration
	// Log receives one line per transition.
	Log logr.Logger

	mu    sync.RWMutex
	kinds map[schema.GroupKind]*kindWatch
	// wake asks the discovery loop for a pass now (Rediscover); made once
	// by initWake, whichever of Rediscover and Start comes first.
	wake     chan struct{}
	wakeOnce sync.Once
	once     sync.Once
	passed   atomic.Bool
	// absentLogged: one log line per absent kind per process.
	absentLogged sync.Map
	// decided holds the registered kinds a discovery pass has looked at
	// (schema.GroupKind -> true). A kind registered since (a profile just
	// loaded) has no watch yet and is undecided, not absent: reads of it
	// fail with ErrKindNotSynced, so its children wait instead of
	// reporting as roots.
	decided sync.Map
	// notServed holds the registered kinds the last discovery pass found
	// in no served version of their group (schema.GroupKind -> true,
	// ServedVersions.Absent): no object of them exists, so a closure does
	// not ask for their children.
	notServed sync.Map
	// fallbackLogged: one log line per kind on the live-read fallback per
	// process.
	fallbackLogged sync.Map
	// ownerKinds: per kind, the kinds of controller owner its cached objects
	// have had (see MayBeControlledBy).
	ownerKinds sync.Map // schema.GroupKind -> *ownerKindSet

	discovery  discovery.DiscoveryInterface
	meta       metadata.Interface
	authz      authorizationv1client.AuthorizationV1Interface
	httpClient *http.Client

	guard *WatchGuard
	// runCtx is Start's context, once started.
	runCtx atomic.Pointer[context.Context]
	// crds follows the CustomResourceDefinitions of registered kinds
	// (crds.go); discovery runs when one changes.
	crds crdWatch
	// discoveryFailed: the last discovery pass failed for some kind.
	discoveryFailed atomic.Bool
}

// kindWatch is one kind's informer cache and health, or, for a kind on the
// live-read fallback (fallback.go), its health alone.
type kindWatch struct {
	entry  graph.Entry // Version is the served version the cache reads
	cancel context.CancelFunc
	// fallback: a walk-only kind the controller may list but not watch,
	// read live; informer is nil.
	fallback bool
	// synced: the cache synced once, or, on the fallback, a list succeeded
	// once.
	synced atomic.Bool
	// syncing: the fallback's first list is in flight.
	syncing atomic.Bool
	// fromCRD: the kind is served by a CustomResourceDefinition.
	fromCRD atomic.Bool
	// syncReplayPending: the kind's first sync or the replay that follows
	// it (replayCache) has not returned yet; startup is not settled before
	// it has (a replay that runs once the workers run asks for more).
	syncReplayPending atomic.Bool
	// owners is the kind's record of controller kinds (ownerKindsOf, the
	// same set for the process's life), held here so that MayBeControlledBy
	// finds it with the kind.
	owners *ownerKindSet
	// informer and lw are the kind's informer and its guarded list-watch
	// (nil on the fallback).
	informer toolscache.SharedIndexInformer
	lw       *guardedListWatch
	// listing counts the full lists in flight (a relist replaces the
	// store); lists counts the ones that ended.
	listing atomic.Int32
	lists   atomic.Int64
	// inOutage mirrors outage for the per-event progress hook.
	inOutage atomic.Bool
	// fills tracks the opt-in fills in flight and the deletions seen
	// meanwhile (optin.go).
	fills fillTracker

	mu      sync.Mutex
	lastErr error // the latest list, watch or probe error
	healthy bool
	// outage is true from the first error until recovery: one Event and one
	// log line per outage, not per retry.
	outage bool
}

// Rediscover asks for a discovery pass now instead of at the next interval:
// the registry changed (a declarative adapter was loaded or removed).
func (s *Supervisor) Rediscover() {
	s.initWake()
	select {
	case s.wake <- struct{}{}:
	default: // a pass is already pending
	}
}

func (s *Supervisor) initWake() {
	s.wakeOnce.Do(func() { s.wake = make(chan struct{}, 1) })
}

// Replay enqueues every cached object of the given kinds, as at start: the
// adapter that reads them changed, so their roots are reconciled again.
func (s *Supervisor) Replay(ctx context.Context, kinds []schema.GroupKind) {
	for _, gk := range kinds {
		s.mu.RLock()
		kw := s.kinds[gk]
		s.mu.RUnlock()
		if kw == nil || !kw.synced.Load() {
			continue // its own sync replays it
		}
		if kw.fallback {
			s.replayRoots(ctx, kw)
			continue
		}
		s.replayCache(ctx, kw)
	}
}

func (s *Supervisor) init() {
	s.once.Do(func() {
		s.kinds = map[schema.GroupKind]*kindWatch{}
		if s.Interval <= 0 {
			s.Interval = 30 * time.Second
		}
		s.guard = &WatchGuard{Deadline: s.WatchProgressDeadline, OnStall: func(name string) {
			s.Log.Info("watch delivered neither an event nor a bookmark within the progress deadline; restarting it from its last resource version", "resource", name, "deadline", s.guard.deadline())
		}}
		s.crds.trigger = make(chan struct{}, 1)
	})
}

// StartupSyncBound is how long the controller's workers wait, at most, for
// the first discovery and every started kind's cache (WaitForStartup).
const StartupSyncBound = time.Minute

// syncPoll is how often a started kind's cache is checked for its first
// sync. client-go's WaitForCacheSync checks every 100 ms: at a cold start a
// kind whose initial list ended just after a check was taken as synced up
// to 100 ms later, and the controller's workers waited for the last one.
const syncPoll = 10 * time.Millisecond

// waitSynced returns true once synced does, false when ctx ends first.
func waitSynced(ctx context.Context, synced func() bool) bool {
	return wait.PollUntilContextCancel(ctx, syncPoll, true, func(context.Context) (bool, error) { return synced(), nil }) == nil
}

// WaitForStartup returns once the supervisor's first discovery is done and
// every kind it started has synced or failed, or after StartupSyncBound, or
// when ctx ends. The controller's workers wait for it: a root reconciled
// before its owner's or its descendants' kind synced would be reported on
// its own, or without digests, and rewritten moments later (more writes at
// cold start, AIBOMs created only to be deleted). A kind that never syncs
// (a failing list) does not hold the others: the wait ends when its watch
// reports an error.
func (s *Supervisor) WaitForStartup(ctx context.Context) {
	s.init()
	bound := time.NewTimer(StartupSyncBound)
	defer bound.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !s.startupSettled() {
		select {
		case <-ctx.Done():
			return
		case <-bound.C:
			s.Log.Info("starting reconciles before every kind's cache synced", "waited", StartupSyncBound)
			return
		case <-tick.C:
		}
	}
}

// startupSettled: the first discovery is done and every started kind's
// cache synced, and the replay that follows its sync returned, or it
// reported an error.
func (s *Supervisor) startupSettled() bool {
	if !s.passed.Load() {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, kw := range s.kinds {
		if kw.synced.Load() && !kw.syncReplayPending.Load() {
			continue
		}
		kw.mu.Lock()
		failed := kw.outage
		kw.mu.Unlock()
		if !failed {
			return false
		}
	}
	return true
}

// ReplayAll sends Events a replay of what every readable kind holds: events
// that arrived before the controller's queue existed (on a replica that did
// not lead yet) were dropped.
func (s *Supervisor) ReplayAll(ctx context.Context) {
	s.init()
	// The replay goes through the enqueue filter: wait until it knows every
	// namespace.
	for !s.Namespaces.Synced() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.mu.RLock()
	kinds := make([]*kindWatch, 0, len(s.kinds))
	for _, kw := range s.kinds {
		kinds = append(kinds, kw)
	}
	s.mu.RUnlock()
	for _, kw := range kinds {
		if !kw.synced.Load() {
			// Its own sync replays it, into the attached queue.
			continue
		}
		if kw.fallback {
			s.replayRoots(ctx, kw)
			continue
		}
		s.replayCache(ctx, kw)
	}
}

// replayCache replays every object of a kind's synced cache through Events.
func (s *Supervisor) replayCache(ctx context.Context, kw *kindWatch) {
	if !s.Events.Leading() {
		return // a follower: ReplayAll runs once it leads
	}
	// The handlers read metadata only: the cached objects as they are.
	objs, err := kw.store().cached(metav1.NamespaceAll)
	if err != nil {
		s.Log.Error(err, "replaying a kind's cached objects", "kind", kw.entry.Kind.String())
		return
	}
	s.Events.Replay(ctx, kw.entry, objs)
}

// FirstPassDone reports whether the first presence discovery finished (the
// readiness check of the manager).
func (s *Supervisor) FirstPassDone() bool { return s.passed.Load() }

// Start runs the supervisor until ctx ends (manager.Runnable).
func (s *Supervisor) Start(ctx context.Context) error {
	s.init()
	var err error
	if s.httpClient, err = rest.HTTPClientFor(s.Config); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	if s.discovery, err = discovery.NewDiscoveryClientForConfigAndClient(s.Config, s.httpClient); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	if s.meta, err = metadata.NewForConfigAndClient(s.Config, s.httpClient); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	if s.authz, err = authorizationv1client.NewForConfigAndClient(s.Config, s.httpClient); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	s.initWake()
	s.runCtx.Store(&ctx)
	cachedObjects.sup.Store(s)
	// The caches admit the objects of opted-in namespaces only: they start
	// once the set of opted-in namespaces is known.
	for !s.Namespaces.Synced() {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.watchCRDs(ctx)
	followUps := 0
	for {
		s.discover(ctx)
		if !s.passed.Swap(true) {
			s.Log.V(1).Info("first discovery pass done")
		}
		var wait <-chan time.Time
		switch {
		case followUps > 0:
			// A CRD just changed: the API server's discovery may lag
			// behind it by a moment.
			wait = time.After(min(s.Interval, time.Duration(3-followUps)*2*time.Second+time.Second))
			followUps--
		case s.needsPolling():
			wait = time.After(s.Interval)
		}
		select {
		case <-ctx.Done():
			s.stopAll()
			return nil
		case <-s.crds.trigger:
			followUps = 2
		case <-s.wake:
			// The registry changed (a declarative adapter came or went).
			continue
		case <-wait:
			s.probe(ctx)
		}
	}
}

// needsPolling reports whether anything needs a periodic pass: a kind on
// the live-read fallback (it has no watch), a discovery that failed, or
// CustomResourceDefinitions that cannot be watched.
func (s *Supervisor) needsPolling() bool {
	if s.discoveryFailed.Load() || !s.crds.healthy() {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, kw := range s.kinds {
		if kw.fallback {
			return true
		}
	}
	return false
}

// NeedLeaderElection is false: every replica discovers kinds and keeps their
// caches warm (a follower is ready and takes over without a cold start); only
// the controller, which writes, waits for leadership.
func (s *Supervisor) NeedLeaderElection() bool { return false }

// discover starts a cache for every registered kind the cluster serves,
// restarts one whose preferred served version changed, and stops the caches
// of kinds no longer served.
func (s *Supervisor) discover(ctx context.Context) {
	// Kinds no longer registered (their adapter was removed) stop being
	// watched; their AIBOMs are kept.
	s.mu.RLock()
	var gone []schema.GroupKind
	for gk := range s.kinds {
		if !s.Registry.Registered(gk) {
			gone = append(gone, gk)
		}
	}
	s.mu.RUnlock()
	for _, gk := range gone {
		s.Log.Info("kind no longer registered by any adapter; its watch stops and its AIBOMs are kept", "kind", gk.String())
		s.stop(gk)
		s.decided.Delete(gk)
		s.notServed.Delete(gk)
	}
	s.resolveUnknownOwners(ctx)
	served := &graph.ServedVersions{Discovery: s.discovery}
	failed := false
	defer func() { s.discoveryFailed.Store(failed) }()
	// The kinds this pass looked at are decided once it has started or
	// stopped their watches (readable reads the watch first).
	var looked []schema.GroupKind
	defer func() {
		for _, gk := range looked {
			s.decided.Store(gk, true)
		}
	}()
	for _, e := range s.Registry.AllEntries() {
		// Looked at even when discovery fails: a kind whose group cannot
		// be discovered degrades as an absent one does, never waits.
		looked = append(looked, e.GroupKind())
		version, ok, err := served.Preferred(e)
		if err != nil {
			// Neither start nor stop on a failed discovery: next pass.
			s.Log.V(1).Info("discovery failed; trying again next pass", "kind", e.Kind.String(), "error", err.Error())
			failed = true
			s.notServed.Delete(e.GroupKind())
			continue
		}
		if !ok && served.Absent(e) {
			s.notServed.Store(e.GroupKind(), true)
		} else {
			s.notServed.Delete(e.GroupKind())
		}
		s.mu.RLock()
		kw := s.kinds[e.GroupKind()]
		s.mu.RUnlock()
		if kw != nil && kw.entry.Role != e.Role {
			// Another adapter took the kind over in another role (a profile
			// tracks a kind another adapter only walks): the cache keeps
			// different fields, so the watch starts again.
			s.Log.Info("kind's role changed; restarting its watch", "kind", e.Kind.String(), "from", kw.entry.Role, "to", e.Role)
			s.stop(e.GroupKind())
			kw = nil
		}
		switch {
		case !ok && kw != nil:
			s.Log.Info("kind no longer served; its watch stops and its AIBOMs are kept", "kind", e.Kind.String())
			s.stop(e.GroupKind())
			setHealth(e, false)
		case !ok:
			if _, logged := s.absentLogged.LoadOrStore(e.GroupKind(), true); !logged {
				s.Log.V(1).Info("kind not served by the cluster; it is watched once its CRD appears (logged once per kind)", "kind", e.Kind.String(), "versions", e.Versions)
			}
			setHealth(e, false)
		case kw != nil && kw.entry.Version == version && kw.fallback:
			// Still list-only? A watch granted since moves the kind to an
			// informer.
			if fallback, err := s.needsFallback(ctx, kw.entry); err == nil && !fallback {
				s.Log.Info("kind may be watched now; leaving the live-read fallback", "kind", e.Kind.String())
				err := s.start(ctx, kw.entry)
				if err != nil {
					s.Log.Error(err, "cannot start the kind's watch", "kind", e.Kind.String())
				}
				s.retire(kw, err == nil, false)
			}
		case kw != nil && kw.entry.Version == version:
			// Unchanged.
		default:
			// The previous version's watch, if any, keeps serving until the
			// new one is in place: in between, the kind is registered and
			// not synced (a walk through it does not decide), never absent
			// (a walk would report its children as roots).
			if kw != nil {
				s.Log.Info("kind's preferred served version changed; restarting its watch", "kind", e.Kind.String(), "from", kw.entry.Version, "to", version)
			}
			if err := s.Registry.SetServedVersion(e.GroupKind(), version); err != nil {
				s.Log.Error(err, "version negotiation")
				continue
			}
			e.Version = version
			if fallback, err := s.needsFallback(ctx, e); err != nil {
				s.Log.V(1).Info("cannot review the kind's permissions; watching it", "kind", e.Kind.String(), "error", err.Error())
			} else if fallback {
				s.startFallback(ctx, e)
				s.retire(kw, true, true)
				continue
			}
			err := s.start(ctx, e)
			if err != nil {
				s.Log.Error(err, "cannot start the kind's watch", "kind", e.Kind.String())
			}
			s.retire(kw, err == nil, false)
		}
	}
}

func (s *Supervisor) start(ctx context.Context, e graph.Entry) error {
	kw := &kindWatch{entry: e, owners: s.ownerKindsOf(e.GroupKind())}
	kw.syncReplayPending.Store(true)
	hooks := watchHooks{
		progress: func() {
			if kw.inOutage.Load() && kw.synced.Load() {
				s.healthy(kw)
			}
		},
		listing: func(on bool) {
			if on {
				kw.listing.Add(1)
				return
			}
			kw.listing.Add(-1)
			kw.lists.Add(1)
		},
		stalled: func() { go s.watchStalled(ctx, kw) },
	}
	if !e.ClusterScoped && s.Namespaces != nil {
		hooks.admit = s.Namespaces.Admitted
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	scope := meta.RESTScopeNamespace
	if e.ClusterScoped { // referenced kinds only
		scope = meta.RESTScopeRoot
	}
	mapper.Add(e.GVK(), scope)
	listGVK := e.GVK()
	listGVK.Kind += "List"
	mapper.Add(listGVK, scope)
	// Kubernetes' own kinds read whole are listed and watched in protobuf
	// (native.go); a client that cannot be built leaves the kind on JSON.
	var native toolscache.ListerWatcher
	if lw, ok, err := NativeListWatch(s.Config, s.httpClient, e); err != nil {
		s.Log.Error(err, "kind stays on JSON", "kind", e.Kind.String())
	} else if ok {
		native = lw
	}
	c, err := cache.New(s.Config, cache.Options{
		HTTPClient:                  s.httpClient,
		Scheme:                      s.Scheme,
		Mapper:                      mapper,
		DefaultTransform:            s.transform(e),
		ReaderFailOnMissingInformer: true,
		DefaultWatchErrorHandler: func(ctx context.Context, r *toolscache.Reflector, err error) {
			s.unhealthy(kw, err)
			toolscache.DefaultWatchErrorHandler(ctx, r, err)
		},
		NewInformer: func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
			if native != nil {
				lw = native
			}
			kw.lw = s.guard.listerWatcher(e.Resource, lw, hooks).(*guardedListWatch)
			kw.informer = toolscache.NewSharedIndexInformerWithOptions(kw.lw, obj, toolscache.SharedIndexInformerOptions{ResyncPeriod: resync, Indexers: indexers})
			return kw.informer
		},
	})
	if err != nil {
		return err
	}
	kctx, cancel := context.WithCancel(ctx)
	kw.cancel = cancel
	inf, err := c.GetInformer(kctx, graph.NewObject(e), cache.BlockUntilSynced(false))
	if err != nil {
		cancel()
		return err
	}
	// The Store reads the informer's store directly (cacheStore), through
	// its own index of controller UIDs.
	if err := kw.informer.AddIndexers(toolscache.Indexers{controllerIndex: controllerIndexFunc}); err != nil {
		cancel()
		return err
	}
	if hooks.admit != nil {
		if _, err := inf.AddEventHandler(s.admissionHandler(kw)); err != nil {
			cancel()
			return err
		}
	}
	if _, err := inf.AddEventHandler(s.Events.Handler(kctx, e)); err != nil {
		cancel()
		return err
	}
	s.mu.Lock()
	s.kinds[e.GroupKind()] = kw
	s.mu.Unlock()
	go func() {
		if err := c.Start(kctx); err != nil {
			s.Log.Error(err, "kind's cache stopped", "kind", e.Kind.String())
		}
	}()
	go func() {
		if !waitSynced(kctx, kw.informer.HasSynced) {
			return
		}
		kw.synced.Store(true)
		s.healthy(kw)
		s.Log.V(1).Info("kind's cache synced", "kind", e.Kind.String())
		// Events delivered before the sync found the kind unreadable:
		// replay every object now that it can be read.
		s.replayCache(kctx, kw)
		kw.syncReplayPending.Store(false)
	}()
	s.crdBacked(kctx, kw)
	s.Log.Info("watching kind", "kind", e.Kind.String(), "version", e.Version, "role", e.Role)
	return nil
}

// store reads the kind's informer store (not on the fallback).
func (kw *kindWatch) store() cacheStore {
	return cacheStore{gvk: kw.entry.GVK(), indexer: kw.informer.GetIndexer()}
}

// retire stops a kind's previous watch once its successor is in place
// (replaced), or, when the successor could not start, removes it too.
// nowFallback: the successor is on the live-read fallback.
func (s *Supervisor) retire(old *kindWatch, replaced, nowFallback bool) {
	if old == nil {
		return
	}
	old.cancel()
	if old.fallback && !nowFallback {
		watchFallback.WithLabelValues(old.entry.Kind.String()).Set(0)
	}
	if !replaced {
		s.mu.Lock()
		if s.kinds[old.entry.GroupKind()] == old {
			delete(s.kinds, old.entry.GroupKind())
		}
		s.mu.Unlock()
	}
}

func (s *Supervisor) stop(gk schema.GroupKind) {
	s.mu.Lock()
	kw := s.kinds[gk]
	delete(s.kinds, gk)
	s.mu.Unlock()
	if kw != nil {
		kw.cancel()
		if kw.fallback {
			watchFallback.WithLabelValues(kw.entry.Kind.String()).Set(0)
		}
	}
}

func (s *Supervisor) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for gk, kw := range s.kinds {
		kw.cancel()
		if kw.fallback {
			watchFallback.WithLabelValues(kw.entry.Kind.String()).Set(0)
		}
		delete(s.kinds, gk)
	}
}

// probe lists one object of every kind on the live-read fallback: it has
// no watch whose events or errors would show its health. A watched kind's
// health comes from its watch: an error marks it unhealthy, the next event
// or bookmark healthy again, and a watch silent past its progress deadline
// is restarted (watchguard.go).
func (s *Supervisor) probe(ctx context.Context) {
	s.mu.RLock()
	kinds := make([]*kindWatch, 0, len(s.kinds))
	for _, kw := range s.kinds {
		if kw.fallback {
			kinds = append(kinds, kw)
		}
	}
	s.mu.RUnlock()
	for _, kw := range kinds {
		s.probeKind(ctx, kw)
	}
}

// probeKind lists one object of a kind. A kind on the fallback is readable
// from its first successful probe on.
func (s *Supervisor) probeKind(ctx context.Context, kw *kindWatch) {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := s.meta.Resource(kw.entry.GroupVersionResourceServed()).List(pctx, metav1.ListOptions{Limit: 1})
	cancel()
	switch {
	case err != nil:
		s.unhealthy(kw, err)
	case kw.fallback:
		s.healthy(kw)
		if !kw.synced.Load() && kw.syncing.CompareAndSwap(false, true) {
			go func() {
				defer kw.syncing.Store(false)
				if err := s.syncFallback(ctx, kw); err != nil {
					s.unhealthy(kw, err)
					return
				}
				// Readable for the first time: walks that passed through
				// it found it unreadable.
				s.replayRoots(ctx, kw)
			}()
		}
	case kw.synced.Load():
		s.healthy(kw)
	}
}

// errWatchStalled is a kind's health while its watch delivers nothing.
var errWatchStalled = errors.New("watch delivered neither an event nor a bookmark within its progress deadline")

// watchStalled marks a kind whose watch went silent unhealthy, with the
// reason a one-object list gives when it fails (a conversion webhook down,
// a permission revoked): one request, only when a watch stalled. The
// kind's next event or bookmark marks it healthy again.
func (s *Supervisor) watchStalled(ctx context.Context, kw *kindWatch) {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := s.meta.Resource(kw.entry.GroupVersionResourceServed()).List(pctx, metav1.ListOptions{Limit: 1})
	if err == nil {
		err = errWatchStalled
	}
	s.mu.RLock()
	current := s.kinds[kw.entry.GroupKind()] == kw
	s.mu.RUnlock()
	if ctx.Err() == nil && current {
		s.unhealthy(kw, err)
	}
}

func (s *Supervisor) unhealthy(kw *kindWatch, err error) {
	watchErrors.WithLabelValues(kw.entry.Kind.String()).Inc()
	setHealth(kw.entry, false)
	kw.mu.Lock()
	first := !kw.outage
	kw.outage, kw.healthy, kw.lastErr = true, false, err
	kw.inOutage.Store(true)
	kw.mu.Unlock()
	if !first {
		return
	}
	s.Log.Error(err, "watch unhealthy; retrying with backoff, AIBOMs kept", "kind", kw.entry.Kind.String())
	s.event(kw.entry, corev1.EventTypeWarning, "WatchUnhealthy", "watch of %s failed; retrying with backoff, existing AIBOMs are kept: %v", kw.entry.Kind.String(), err)
}

func (s *Supervisor) healthy(kw *kindWatch) {
	setHealth(kw.entry, true)
	kw.mu.Lock()
	recovered := kw.outage
	kw.outage, kw.healthy = false, true
	kw.inOutage.Store(false)
	kw.mu.Unlock()
	if recovered {
		s.Log.Info("watch recovered", "kind", kw.entry.Kind.String())
		s.event(kw.entry, corev1.EventTypeNormal, "WatchRecovered", "watch of %s recovered", kw.entry.Kind.String())
	}
}

// event records a kind-level Event regarding the kind's CustomResourceDefinition.
func (s *Supervisor) event(e graph.Entry, eventType, reason, note string, args ...any) {
	if s.Recorder == nil {
		return
	}
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	crd.SetName(e.Resource + "." + e.Group)
	crd.SetNamespace(metav1.NamespaceDefault)
	s.Recorder.Eventf(crd, nil, eventType, reason, "Watch", note, args...)
}

// Healthy reports whether a kind's watch is currently healthy.
func (s *Supervisor) Healthy(gk schema.GroupKind) bool {
	s.mu.RLock()
	kw := s.kinds[gk]
	s.mu.RUnlock()
	if kw == nil {
		return false
	}
	kw.mu.Lock()
	defer kw.mu.Unlock()
	return kw.healthy
}

// readable returns the watch of a kind that can be read: its cache synced at
// least once, or, on the fallback, a live list succeeded once.
func (s *Supervisor) readable(e graph.Entry) (*kindWatch, error) {
	s.mu.RLock()
	kw := s.kinds[e.GroupKind()]
	s.mu.RUnlock()
	if kw == nil {
		if _, ok := s.decided.Load(e.GroupKind()); !ok {
			// Registered, but no discovery pass has looked at it yet:
			// undecided, not absent (tracked means registered).
			return nil, fmt.Errorf("%s: %w: no discovery pass has looked at it yet", e.Kind.String(), graph.ErrKindNotSynced)
		}
		return nil, fmt.Errorf("%s: %w", e.Kind.String(), graph.ErrKindNotReady)
	}
	if !kw.synced.Load() {
		kw.mu.Lock()
		cause := kw.lastErr
		kw.mu.Unlock()
		if cause != nil && (apierrors.IsForbidden(cause) || apierrors.IsNotFound(cause) || meta.IsNoMatchError(cause)) {
			// Denied or not served after all: the seed's degradation
			// (report as today). Keep the cause classifiable (Forbidden)
			// for the miss counter.
			return nil, fmt.Errorf("%s: %w: %w", e.Kind.String(), graph.ErrKindNotReady, cause)
		}
		if cause != nil {
			return nil, fmt.Errorf("%s: %w: %w", e.Kind.String(), graph.ErrKindNotSynced, cause)
		}
		return nil, fmt.Errorf("%s: %w", e.Kind.String(), graph.ErrKindNotSynced)
	}
	return kw, nil
}

// Get implements Store.
func (s *Supervisor) Get(ctx context.Context, e graph.Entry, namespace, name string) (client.Object, error) {
	kw, err := s.readable(e)
	if err != nil {
		return nil, err
	}
	if kw.fallback {
		return s.liveGet(ctx, kw, namespace, name)
	}
	return kw.store().Get(ctx, kw.entry, namespace, name)
}

// ControlledBy implements Store. For a kind on the live-read fallback, the
// namespace is listed once per ReadMemo (see WithReadMemo; the closure
// carries one), or once per call without one.
func (s *Supervisor) ControlledBy(ctx context.Context, e graph.Entry, namespace string, uid types.UID) ([]client.Object, error) {
	kw, err := s.readable(e)
	if err != nil {
		return nil, err
	}
	if kw.fallback {
		return s.liveControlledBy(ctx, kw, namespace, uid)
	}
	return kw.store().ControlledBy(ctx, kw.entry, namespace, uid)
}

// GetMetadata implements graph.MetadataReader: a cached object's metadata
// without decoding the rest.
func (s *Supervisor) GetMetadata(ctx context.Context, e graph.Entry, namespace, name string) (client.Object, error) {
	kw, err := s.readable(e)
	if err != nil {
		return nil, err
	}
	if kw.fallback {
		return s.liveGet(ctx, kw, namespace, name)
	}
	return kw.store().getMetadata(namespace, name)
}

// ControlledByMetadata implements graph.MetadataReader.
func (s *Supervisor) ControlledByMetadata(ctx context.Context, e graph.Entry, namespace string, uid types.UID) ([]client.Object, error) {
	kw, err := s.readable(e)
	if err != nil {
		return nil, err
	}
	if kw.fallback {
		return s.liveControlledBy(ctx, kw, namespace, uid)
	}
	return kw.store().controlledByMetadata(namespace, uid)
}

// InNamespace implements Store.
func (s *Supervisor) InNamespace(ctx context.Context, e graph.Entry, namespace string) ([]client.Object, error) {
	kw, err := s.readable(e)
	if err != nil {
		return nil, err
	}
	if kw.fallback {
		return s.liveList(ctx, kw, namespace)
	}
	return kw.store().InNamespace(ctx, kw.entry, namespace)
}

// InNamespaceMetadata implements graph.NamespaceMetadataLister: the cached
// objects as they are in the store, without a copy (callers read their
// metadata and must not change them). A kind on the live-read fallback is
// listed as InNamespace lists it.
func (s *Supervisor) InNamespaceMetadata(ctx context.Context, e graph.Entry, namespace string) ([]client.Object, error) {
	kw, err := s.readable(e)
	if err != nil {
		return nil, err
	}
	if kw.fallback {
		return s.liveList(ctx, kw, namespace)
	}
	return kw.store().cached(namespace)
}

// crdBacked records whether a kind is served by a CustomResourceDefinition
// (one read when its watch starts).
func (s *Supervisor) crdBacked(ctx context.Context, kw *kindWatch) {
	if crd, known := s.crds.get(kw.entry); known {
		kw.fromCRD.Store(crd != nil)
		return
	}
	_, err := s.meta.Resource(crdResource).Get(ctx, kw.entry.Resource+"."+kw.entry.Group, metav1.GetOptions{})
	kw.fromCRD.Store(err == nil)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Removing reports whether a kind is being removed from the cluster: its
// CustomResourceDefinition is terminating or gone. Deleting a CRD deletes
// all its objects; their AIBOMs are kept rather than treated as workload
// deletions. One live read, only when an object of a CRD-backed kind is found
// deleted.
func (s *Supervisor) Removing(ctx context.Context, e graph.Entry) bool {
	s.mu.RLock()
	kw := s.kinds[e.GroupKind()]
	s.mu.RUnlock()
	if kw == nil {
		return true // no longer watched: the kind went away
	}
	if !kw.fromCRD.Load() {
		return false
	}
	if crd, known := s.crds.get(e); known {
		return crd == nil || crd.GetDeletionTimestamp() != nil
	}
	crd, err := s.meta.Resource(crdResource).Get(ctx, e.Resource+"."+e.Group, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true
	}
	return err == nil && crd.GetDeletionTimestamp() != nil
}

// ReadsLive implements LiveReads: the kinds on the get/list fallback.
func (s *Supervisor) ReadsLive(e graph.Entry) bool {
	s.mu.RLock()
	kw := s.kinds[e.GroupKind()]
	s.mu.RUnlock()
	return kw != nil && kw.fallback
}

// MayBeControlledBy reports whether an object of kind child may have a
// controller of kind owner: false only when child's cache has synced and none
// of the objects it ever held had a controller of that kind. The closure
// skips such a kind instead of querying it for every node (an index lookup
// and a list per kind per node otherwise).
func (s *Supervisor) MayBeControlledBy(child graph.Entry, owner schema.GroupKind) bool {
	s.mu.RLock()
	kw := s.kinds[child.GroupKind()]
	s.mu.RUnlock()
	if kw == nil {
		if _, absent := s.notServed.Load(child.GroupKind()); absent {
			// Not served: no object of it exists, so none has a
			// controller. Not a miss of the closure either: nothing of
			// it can be missing below an owner.
			return false
		}
	}
	if kw == nil || !kw.synced.Load() {
		// Unreadable kinds are queried, so that the closure reports them as
		// misses.
		return true
	}
	// A kind read live has the record of every object a live read returned
	// (the first cluster-wide list, walks through it, closures' lists): a
	// closure lists it only below a kind that has controlled its objects.
	// Every kind's record exists from its start; a kind read live fills it
	// from its first list.
	return kw.owners.has(owner)
}
