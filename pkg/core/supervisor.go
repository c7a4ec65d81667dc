package core

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
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// ErrKindNotReady is returned by the supervisor's Store for a kind whose CRD
// is absent or whose cache has not synced yet. The walk treats it like an
// absent kind: the workload is reported as today.
var ErrKindNotReady = errors.New("kind not served or its cache not synced")

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
	Registry *Registry
	// Config is the REST config for the kinds' caches, discovery and probes.
	Config *rest.Config
	// Scheme is passed to the kinds' caches.
	Scheme *runtime.Scheme
	// Mapper maps events to workloads; its Store must be this Supervisor.
	Mapper EventMapper
	// Recorder emits one Event per health transition; may be nil.
	Recorder events.EventRecorder
	// Interval is how often presence is re-discovered and healthy watches
	// probed (default 30s).
	Interval time.Duration
	// Log receives one line per transition.
	Log logr.Logger

	mu       sync.RWMutex
	kinds    map[schema.GroupKind]*kindWatch
	queue    queue
	queueSet chan struct{}
	once     sync.Once
	passed   atomic.Bool
	// absentLogged: one log line per absent kind per process.
	absentLogged sync.Map

	discovery  discovery.DiscoveryInterface
	meta       metadata.Interface
	httpClient *http.Client
}

// kindWatch is one kind's informer cache and health.
type kindWatch struct {
	entry  Entry // Version is the served version the cache reads
	cache  cache.Cache
	cancel context.CancelFunc
	synced atomic.Bool
	// fromCRD: the kind is served by a CustomResourceDefinition.
	fromCRD atomic.Bool

	mu      sync.Mutex
	lastErr error // the latest list, watch or probe error
	healthy bool
	// outage is true from the first error until recovery: one Event and one
	// log line per outage, not per retry.
	outage bool
}

func (s *Supervisor) init() {
	s.once.Do(func() {
		s.kinds = map[schema.GroupKind]*kindWatch{}
		s.queueSet = make(chan struct{})
		if s.Interval <= 0 {
			s.Interval = 30 * time.Second
		}
	})
}

// Source returns the controller source through which the supervisor's
// informers enqueue work.
func (s *Supervisor) Source() source.TypedSource[Request] {
	s.init()
	return source.TypedFunc[Request](func(_ context.Context, q queue) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.queue == nil {
			s.queue = q
			close(s.queueSet)
		}
		return nil
	})
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
	select {
	case <-s.queueSet:
	case <-ctx.Done():
		return nil
	}
	ticker := time.NewTicker(s.Interval)
	defer ticker.Stop()
	for {
		s.discover(ctx)
		s.passed.Store(true)
		select {
		case <-ctx.Done():
			s.stopAll()
			return nil
		case <-ticker.C:
			s.probe(ctx)
		}
	}
}

// NeedLeaderElection is false: every replica keeps its caches warm; only the
// controller's writes wait for leadership.
func (s *Supervisor) NeedLeaderElection() bool { return false }

// discover starts a cache for every registered kind the cluster serves,
// restarts one whose preferred served version changed, and stops the caches
// of kinds no longer served.
func (s *Supervisor) discover(ctx context.Context) {
	served := &ServedVersions{Discovery: s.discovery}
	for _, e := range s.Registry.Entries() {
		version, ok, err := served.Preferred(e)
		if err != nil {
			// Neither start nor stop on a failed discovery: next pass.
			s.Log.V(1).Info("discovery failed; trying again next pass", "kind", e.Kind.String(), "error", err.Error())
			continue
		}
		s.mu.RLock()
		kw := s.kinds[e.GroupKind()]
		s.mu.RUnlock()
		switch {
		case !ok && kw != nil:
			s.Log.Info("kind no longer served; its watch stops and its AIBOMs are kept", "kind", e.Kind.String())
			s.stop(e.GroupKind())
			setHealth(e, false)
		case !ok:
			if _, logged := s.absentLogged.LoadOrStore(e.GroupKind(), true); !logged {
				s.Log.Info("kind not served by the cluster; it is watched once its CRD appears", "kind", e.Kind.String(), "versions", e.Versions)
			}
			setHealth(e, false)
		case kw != nil && kw.entry.Version == version:
			// Unchanged.
		default:
			if kw != nil {
				s.Log.Info("kind's preferred served version changed; restarting its watch", "kind", e.Kind.String(), "from", kw.entry.Version, "to", version)
				s.stop(e.GroupKind())
			}
			if err := s.Registry.SetServedVersion(e.GroupKind(), version); err != nil {
				s.Log.Error(err, "version negotiation")
				continue
			}
			e.Version = version
			if err := s.start(ctx, e); err != nil {
				s.Log.Error(err, "cannot start the kind's watch", "kind", e.Kind.String())
			}
		}
	}
}

func (s *Supervisor) start(ctx context.Context, e Entry) error {
	kw := &kindWatch{entry: e}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(e.GVK(), meta.RESTScopeNamespace)
	listGVK := e.GVK()
	listGVK.Kind += "List"
	mapper.Add(listGVK, meta.RESTScopeNamespace)
	c, err := cache.New(s.Config, cache.Options{
		HTTPClient:                  s.httpClient,
		Scheme:                      s.Scheme,
		Mapper:                      mapper,
		DefaultTransform:            cache.TransformStripManagedFields(),
		ReaderFailOnMissingInformer: true,
		DefaultWatchErrorHandler: func(ctx context.Context, r *toolscache.Reflector, err error) {
			s.unhealthy(kw, err)
			toolscache.DefaultWatchErrorHandler(ctx, r, err)
		},
	})
	if err != nil {
		return err
	}
	kctx, cancel := context.WithCancel(ctx)
	kw.cache, kw.cancel = c, cancel
	if err := c.IndexField(kctx, NewObject(e), ControllerUIDIndex, ControllerUID); err != nil {
		cancel()
		return err
	}
	inf, err := c.GetInformer(kctx, NewObject(e), cache.BlockUntilSynced(false))
	if err != nil {
		cancel()
		return err
	}
	if _, err := inf.AddEventHandler(s.Mapper.InformerHandler(kctx, e, s.queue)); err != nil {
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
		if !c.WaitForCacheSync(kctx) {
			return
		}
		kw.synced.Store(true)
		s.healthy(kw)
		// Events delivered before the sync found the kind unreadable:
		// replay every object now that it can be read.
		objs, err := ReaderStore{Reader: c}.InNamespace(kctx, e, metav1.NamespaceAll)
		if err != nil {
			s.Log.Error(err, "replaying a kind's objects after its cache synced", "kind", e.Kind.String())
			return
		}
		for _, obj := range objs {
			s.Mapper.OnAdd(kctx, e, obj, s.queue)
		}
	}()
	s.crdBacked(kctx, kw)
	s.Log.Info("watching kind", "kind", e.Kind.String(), "version", e.Version, "role", e.Role)
	return nil
}

func (s *Supervisor) stop(gk schema.GroupKind) {
	s.mu.Lock()
	kw := s.kinds[gk]
	delete(s.kinds, gk)
	s.mu.Unlock()
	if kw != nil {
		kw.cancel()
	}
}

func (s *Supervisor) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for gk, kw := range s.kinds {
		kw.cancel()
		delete(s.kinds, gk)
	}
}

// probe lists one object of every watched kind: a watch that stopped
// delivering (a conversion webhook that broke after the initial list) shows
// up here, and so does its recovery.
func (s *Supervisor) probe(ctx context.Context) {
	s.mu.RLock()
	kinds := make([]*kindWatch, 0, len(s.kinds))
	for _, kw := range s.kinds {
		kinds = append(kinds, kw)
	}
	s.mu.RUnlock()
	for _, kw := range kinds {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := s.meta.Resource(kw.entry.GroupVersionResourceServed()).List(pctx, metav1.ListOptions{Limit: 1})
		cancel()
		if err != nil {
			s.unhealthy(kw, err)
		} else if kw.synced.Load() {
			s.healthy(kw)
		}
	}
}

func (s *Supervisor) unhealthy(kw *kindWatch, err error) {
	watchErrors.WithLabelValues(kw.entry.Kind.String()).Inc()
	setHealth(kw.entry, false)
	kw.mu.Lock()
	first := !kw.outage
	kw.outage, kw.healthy, kw.lastErr = true, false, err
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
	kw.mu.Unlock()
	if recovered {
		s.Log.Info("watch recovered", "kind", kw.entry.Kind.String())
		s.event(kw.entry, corev1.EventTypeNormal, "WatchRecovered", "watch of %s recovered", kw.entry.Kind.String())
	}
}

// event records a kind-level Event regarding the kind's CustomResourceDefinition.
func (s *Supervisor) event(e Entry, eventType, reason, note string, args ...any) {
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

// reader returns the cache of a kind that has synced at least once.
func (s *Supervisor) reader(e Entry) (client.Reader, Entry, error) {
	s.mu.RLock()
	kw := s.kinds[e.GroupKind()]
	s.mu.RUnlock()
	if kw == nil {
		return nil, e, fmt.Errorf("%s: %w", e.Kind.String(), ErrKindNotReady)
	}
	if !kw.synced.Load() {
		kw.mu.Lock()
		cause := kw.lastErr
		kw.mu.Unlock()
		if cause != nil {
			// Keep the cause classifiable (Forbidden) for the miss counter.
			return nil, e, fmt.Errorf("%s: %w: %w", e.Kind.String(), ErrKindNotReady, cause)
		}
		return nil, e, fmt.Errorf("%s: %w", e.Kind.String(), ErrKindNotReady)
	}
	return kw.cache, kw.entry, nil
}

// Get implements Store.
func (s *Supervisor) Get(ctx context.Context, e Entry, namespace, name string) (client.Object, error) {
	r, e, err := s.reader(e)
	if err != nil {
		return nil, err
	}
	return ReaderStore{Reader: r}.Get(ctx, e, namespace, name)
}

// ControlledBy implements Store.
func (s *Supervisor) ControlledBy(ctx context.Context, e Entry, namespace string, uid types.UID) ([]client.Object, error) {
	r, e, err := s.reader(e)
	if err != nil {
		return nil, err
	}
	return ReaderStore{Reader: r}.ControlledBy(ctx, e, namespace, uid)
}

// InNamespace implements Store.
func (s *Supervisor) InNamespace(ctx context.Context, e Entry, namespace string) ([]client.Object, error) {
	r, e, err := s.reader(e)
	if err != nil {
		return nil, err
	}
	return ReaderStore{Reader: r}.InNamespace(ctx, e, namespace)
}

// crdBacked records whether a kind is served by a CustomResourceDefinition
// (one read when its watch starts).
func (s *Supervisor) crdBacked(ctx context.Context, kw *kindWatch) {
	_, err := s.meta.Resource(crdResource).Get(ctx, kw.entry.Resource+"."+kw.entry.Group, metav1.GetOptions{})
	kw.fromCRD.Store(err == nil)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Removing reports whether a kind is being removed from the cluster: its
// CustomResourceDefinition is terminating or gone. Deleting a CRD deletes
// all its objects; their AIBOMs are kept rather than treated as workload
// deletions. One live read, only when an object of a CRD-backed kind is found
// deleted.
func (s *Supervisor) Removing(ctx context.Context, e Entry) bool {
	s.mu.RLock()
	kw := s.kinds[e.GroupKind()]
	s.mu.RUnlock()
	if kw == nil {
		return true // no longer watched: the kind went away
	}
	if !kw.fromCRD.Load() {
		return false
	}
	crd, err := s.meta.Resource(crdResource).Get(ctx, e.Resource+"."+e.Group, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true
	}
	return err == nil && crd.GetDeletionTimestamp() != nil
}
