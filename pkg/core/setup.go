package core

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/lazylog"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/core/watch"
)

// ControllerName names the controller in logs, metrics and Events.
const ControllerName = "aibom"

// Options configures the core on a manager.
type Options struct {
	// Registry holds the kinds of the enabled adapters.
	Registry *graph.Registry
	// Tool names this controller and its version in documents.
	Tool document.Tool
	// MaxDocumentBytes is the inline cap of a document (0: no cap).
	MaxDocumentBytes int
	// ReportAll gives every root an AIBOM; by default a root with no AI
	// signal gets none (Reconciler.ReportAll).
	ReportAll bool
	// MaxConcurrentReconciles bounds parallel reconciles (default
	// DefaultMaxConcurrentReconciles).
	MaxConcurrentReconciles int
	// SkipNameValidation allows several managers in one process (tests).
	SkipNameValidation bool
	// DiscoveryInterval is how often the supervisor re-discovers which kinds
	// are served and probes their watches (default 30s).
	DiscoveryInterval time.Duration
	// ScrapeRetry is how soon a failed scrape is retried (default 30s).
	ScrapeRetry time.Duration
	// ResyncInterval is how often every root is re-verified (the safety
	// net for lost events; default DefaultResyncInterval, negative: never).
	ResyncInterval time.Duration
	// ResyncRate paces a re-verification pass, in enqueues per second
	// (default DefaultResyncRate).
	ResyncRate float64
	// Sinks receives the documents written and the AIBOMs deleted (pkg/sink
	// through the configuration); nil: none.
	Sinks reconcile.DocumentSinks
	// WatchProgressDeadline is how long a watch may deliver neither an
	// event nor a bookmark before it is restarted (default
	// DefaultWatchProgressDeadline).
	WatchProgressDeadline time.Duration
	// DanglingOwnerGrace is how long a workload whose controller owner is
	// gone while the reference remains waits for the garbage collector
	// before it is decided a root (default reconcile.DefaultDanglingGrace;
	// negative: no wait).
	DanglingOwnerGrace time.Duration
	// SupervisorConfig, when set, is the REST config of the kinds' caches,
	// discovery and probes (default: the manager's).
	SupervisorConfig *rest.Config
}

// DefaultMaxConcurrentReconciles is the default number of parallel
// reconciles: as many as the API server's own write time is measured with
// (8 writers), chosen by measurement at 1,000 roots (docs/performance.md,
// "Writes at the API server's pace"): 4 left the API server idle between
// writes, 16 doubled its p50 write latency and slowed convergence on 2
// cores.
const DefaultMaxConcurrentReconciles = 8

// CacheOptions are the informer-cache settings the core relies on: managed
// fields (and, on namespaces, the last-applied-configuration annotation) are
// dropped from every cached object, AIBOMs are cached without their
// document (TransformAIBOM), and a read of a kind the core did not register
// fails instead of silently starting an informer. The registered kinds have
// caches of their own (Supervisor), with TransformFor.
//
// With cfg, AIBOMs are watched for their metadata only, and the controller's
// own writes coming back are delivered from what it wrote
// (reconcile.EchoListWatch); without it (or if the metadata client cannot be
// built from it), in full.
func CacheOptions(cfg *rest.Config) cache.Options {
	guarded := managerGuard.NewInformer(informerName, nil)
	var aiboms metadata.ResourceInterface
	if cfg != nil {
		if mc, err := metadata.NewForConfig(cfg); err == nil {
			aiboms = mc.Resource(v1alpha1.GroupVersion.WithResource("aiboms"))
		}
	}
	return cache.Options{
		DefaultTransform: graph.TransformMetadata,
		ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.AIBOM{}: {Transform: reconcile.TransformAIBOM},
		},
		ReaderFailOnMissingInformer: true,
		// Long watches whose progress is checked, as the supervisor's.
		NewInformer: func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
			if _, ok := obj.(*v1alpha1.AIBOM); !ok || aiboms == nil {
				return guarded(lw, obj, resync, indexers)
			}
			echo := reconcile.NewEchoListWatch(lw, aiboms)
			inf := guarded(echo, obj, resync, indexers)
			echo.SetStore(inf.GetStore())
			return inf
		},
	}
}

// managerGuard guards the manager cache's watches (namespaces, AIBOMs).
var managerGuard = &watch.WatchGuard{}

// informerName names an informer by its object's kind.
func informerName(obj runtime.Object) string {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return strings.ToLower(gvk.Kind)
	}
	return strings.ToLower(reflect.TypeOf(obj).Elem().Name())
}

// danglingGrace is the reconciler's DanglingGrace for an Options value.
func danglingGrace(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return reconcile.DefaultDanglingGrace
	case d < 0:
		return 0
	}
	return d
}

// Setup wires the core into a manager: the supervisor that watches every
// registered kind through its own cache, the reconciler, and the watches on
// namespaces and AIBOMs. The manager must have been built with CacheOptions.
func Setup(ctx context.Context, mgr manager.Manager, opts Options) (*reconcile.Reconciler, *watch.Supervisor, error) {
	if opts.Registry == nil {
		return nil, nil, fmt.Errorf("core setup: no registry")
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = DefaultMaxConcurrentReconciles
	}
	config := opts.SupervisorConfig
	if config == nil {
		config = mgr.GetConfig()
	}
	logger := mgr.GetLogger().WithName(ControllerName)
	sup := &watch.Supervisor{
		Registry: opts.Registry,
		Config:   config,
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder(ControllerName + "-controller"),
		Interval: opts.DiscoveryInterval,
		Log:      logger.WithName("supervisor"),

		WatchProgressDeadline: opts.WatchProgressDeadline,
	}
	// A controller owner of a kind no adapter declares is resolved (and
	// read, where permitted) by the next discovery pass.
	opts.Registry.SetUnknownOwnerHook(sup.Rediscover)
	// Deliveries seen by an earlier controller of this process are not this
	// one's to trust (a new process starts with none either).
	reconcile.ForgetDeliveries()
	settings := reconcile.NewSettings(opts.MaxDocumentBytes)
	namespaces := watch.NewNamespaceSet()
	refs := reconcile.NewReferenceIndex()
	mapper := &reconcile.EventMapper{Registry: opts.Registry, Store: sup, Reader: mgr.GetCache(), Namespaces: namespaces, Roots: reconcile.NewRootCache(), References: refs}
	sup.Namespaces = namespaces
	r := &reconcile.Reconciler{
		Registry:         opts.Registry,
		Store:            sup,
		Kinds:            sup,
		Reader:           mgr.GetCache(),
		APIReader:        mgr.GetAPIReader(),
		Writer:           mgr.GetClient(),
		Recorder:         sup.Recorder,
		Tool:             opts.Tool,
		MaxDocumentBytes: opts.MaxDocumentBytes,
		Settings:         settings,
		Sinks:            opts.Sinks,
		ReportAll:        opts.ReportAll,
		Now:              time.Now,
		ScrapeRetry:      opts.ScrapeRetry,
		References:       refs,
		DanglingGrace:    danglingGrace(opts.DanglingOwnerGrace),
	}
	feed := reconcile.NewFeed(r, mapper)
	sup.Events = feed
	requestLogger := lazylog.Wrap(logger)
	ctrl, err := controller.NewTyped[reconcile.Request](ControllerName, mgr, controller.TypedOptions[reconcile.Request]{
		Reconciler:              r,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		SkipNameValidation:      ptr.To(opts.SkipNameValidation),
		// Every request gets a logger with its names, and controller-runtime
		// adds a reconcile ID; most requests log nothing, so the pairs are
		// encoded only when a message is (lazylog).
		LogConstructor: func(req *reconcile.Request) logr.Logger {
			if req != nil {
				return requestLogger.WithValues("workload", req.String())
			}
			return requestLogger
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("core setup: controller: %w", err)
	}
	if err := ctrl.Watch(feed.Queue.Source(sup)); err != nil {
		return nil, nil, fmt.Errorf("core setup: supervisor source: %w", err)
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	// The enqueue filter of the event path, kept on every replica.
	nsInformer, err := mgr.GetCache().GetInformer(ctx, ns, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, nil, fmt.Errorf("core setup: namespace informer: %w", err)
	}
	reg, err := nsInformer.AddEventHandler(namespaces.Handler())
	if err != nil {
		return nil, nil, fmt.Errorf("core setup: namespace filter: %w", err)
	}
	namespaces.SetSynced(reg.HasSynced)
	sup.FollowNamespaces()
	if err := ctrl.Watch(source.TypedKind[*v1alpha1.AIBOM, reconcile.Request](mgr.GetCache(), &v1alpha1.AIBOM{}, mapper.ForAIBOMs())); err != nil {
		return nil, nil, fmt.Errorf("core setup: watch AIBOMs: %w", err)
	}
	// The supervisor lists AIBOMs when a kind's cache syncs, on every
	// replica: the AIBOM informer must exist before the controller (which
	// runs on the leader only) would create it.
	if _, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.AIBOM{}, cache.BlockUntilSynced(false)); err != nil {
		return nil, nil, fmt.Errorf("core setup: AIBOM informer: %w", err)
	}
	if err := mgr.Add(startWithCaches{sup}); err != nil {
		return nil, nil, fmt.Errorf("core setup: supervisor: %w", err)
	}
	if opts.ResyncInterval == 0 {
		opts.ResyncInterval = reconcile.DefaultResyncInterval
	}
	if opts.ResyncInterval > 0 {
		if err := mgr.Add(reconcile.ResyncLoop{Reconciler: r, Log: sup.Log, Interval: opts.ResyncInterval, Rate: opts.ResyncRate}); err != nil {
			return nil, nil, fmt.Errorf("core setup: re-verification: %w", err)
		}
	}
	return r, sup, nil
}

// startWithCaches starts the supervisor together with the manager's caches
// instead of after they synced: controller-runtime starts every runnable
// that has a cache in that first group. The supervisor's discovery and its
// kinds' initial lists then overlap the manager cache's sync, which
// controller-runtime checks every 100 ms. Nothing it does needs that cache:
// it waits for the namespace filter itself, and its events are dropped
// until the controller's queue attaches (Feed), which is after the caches.
// The group waits for each member's cache to sync; the supervisor's own
// wait is the controller's (WaitForStartup), so its cache answers at once.
type startWithCaches struct{ *watch.Supervisor }

// GetCache puts the supervisor in the manager's group of caches.
func (startWithCaches) GetCache() cache.Cache { return syncedAtOnce{} }

// syncedAtOnce answers the manager's wait for the group of caches; the
// manager calls nothing else of a member's cache.
type syncedAtOnce struct{ cache.Cache }

// WaitForCacheSync implements cache.Cache.
func (syncedAtOnce) WaitForCacheSync(context.Context) bool { return true }
