package core

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// ControllerName names the controller in logs, metrics and Events.
const ControllerName = "aibom"

// Options configures the core on a manager.
type Options struct {
	// Registry holds the kinds of the enabled adapters.
	Registry *Registry
	// Tool names this controller and its version in documents.
	Tool document.Tool
	// MaxDocumentBytes is the inline cap of a document (0: no cap).
	MaxDocumentBytes int
	// MaxConcurrentReconciles bounds parallel reconciles (default 4).
	MaxConcurrentReconciles int
	// SkipNameValidation allows several managers in one process (tests).
	SkipNameValidation bool
}

// CacheOptions are the informer-cache settings the core relies on: managed
// fields are dropped from every cached object, and a read of a kind the core
// did not register fails instead of silently starting an informer.
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform:            cache.TransformStripManagedFields(),
		ReaderFailOnMissingInformer: true,
	}
}

// Setup registers the controller-UID index on every registered kind, the
// watches, and the reconciler with the manager. The manager must have been
// built with CacheOptions.
func Setup(ctx context.Context, mgr manager.Manager, opts Options) (*Reconciler, error) {
	if opts.Registry == nil {
		return nil, fmt.Errorf("core setup: no registry")
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 4
	}
	c := mgr.GetCache()
	for _, e := range opts.Registry.Entries() {
		if err := mgr.GetFieldIndexer().IndexField(ctx, NewObject(e), ControllerUIDIndex, ControllerUID); err != nil {
			return nil, fmt.Errorf("core setup: index %s: %w", e.Kind.String(), err)
		}
	}
	store := ReaderStore{Reader: c}
	r := &Reconciler{
		Registry:         opts.Registry,
		Store:            store,
		Reader:           c,
		Writer:           mgr.GetClient(),
		Recorder:         mgr.GetEventRecorder(ControllerName + "-controller"),
		Tool:             opts.Tool,
		MaxDocumentBytes: opts.MaxDocumentBytes,
		Now:              time.Now,
	}
	ctrl, err := controller.NewTyped[Request](ControllerName, mgr, controller.TypedOptions[Request]{
		Reconciler:              r,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		SkipNameValidation:      ptr.To(opts.SkipNameValidation),
		LogConstructor: func(req *Request) logr.Logger {
			l := mgr.GetLogger().WithName(ControllerName)
			if req != nil {
				l = l.WithValues("workload", req.String())
			}
			return l
		},
	})
	if err != nil {
		return nil, fmt.Errorf("core setup: controller: %w", err)
	}
	mapper := EventMapper{Registry: opts.Registry, Store: store, Reader: c}
	for _, e := range opts.Registry.Entries() {
		if err := ctrl.Watch(source.TypedKind[client.Object, Request](c, NewObject(e), mapper.ForKind(e))); err != nil {
			return nil, fmt.Errorf("core setup: watch %s: %w", e.Kind.String(), err)
		}
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := ctrl.Watch(source.TypedKind[client.Object, Request](c, client.Object(ns), mapper.ForNamespaces())); err != nil {
		return nil, fmt.Errorf("core setup: watch namespaces: %w", err)
	}
	if err := ctrl.Watch(source.TypedKind[*v1alpha1.AIBOM, Request](c, &v1alpha1.AIBOM{}, mapper.ForAIBOMs())); err != nil {
		return nil, fmt.Errorf("core setup: watch AIBOMs: %w", err)
	}
	return r, nil
}
