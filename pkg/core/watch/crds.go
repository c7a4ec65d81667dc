package watch

import (
	"context"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// crdWatch follows, as metadata, the CustomResourceDefinitions of the
// registered kinds: a kind's CRD created, changed (served versions,
// established) or deleted triggers a discovery pass, so that the supervisor
// does not poll discovery while nothing changes. Without the right to list
// and watch CRDs, the supervisor polls every Interval as before.
type crdWatch struct {
	trigger  chan struct{}
	informer toolscache.SharedIndexInformer
	synced   atomic.Bool
	trouble  atomic.Bool
}

// healthy: the CRDs are watched, and their cache is complete.
func (c *crdWatch) healthy() bool { return c.synced.Load() && !c.trouble.Load() }

// get returns a kind's CRD from the cache (nil when it has none); known is
// false when the cache cannot answer.
func (c *crdWatch) get(e graph.Entry) (crd client.Object, known bool) {
	if !c.healthy() || c.informer == nil {
		return nil, false
	}
	obj, exists, err := c.informer.GetStore().GetByKey(e.Resource + "." + e.Group)
	if err != nil {
		return nil, false
	}
	if !exists {
		return nil, true
	}
	o, ok := obj.(client.Object)
	if !ok {
		return nil, false
	}
	return o, true
}

// crdTransform keeps a CRD's name, resource version and deletion timestamp.
func crdTransform(in any) (any, error) {
	if o, ok := in.(*metav1.PartialObjectMetadata); ok && o != nil {
		out := &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta}
		out.Name, out.UID, out.ResourceVersion, out.DeletionTimestamp = o.Name, o.UID, o.ResourceVersion, o.DeletionTimestamp
		return out, nil
	}
	return in, nil
}

// watchCRDs starts the CRD watch and waits (briefly) for its first list.
func (s *Supervisor) watchCRDs(ctx context.Context) {
	names := map[string]bool{}
	for _, e := range s.Registry.AllEntries() {
		if e.Group != "" {
			names[e.Resource+"."+e.Group] = true
		}
	}
	res := s.meta.Resource(crdResource)
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, o)
		},
	}
	hooks := watchHooks{progress: func() {
		if s.crds.trouble.Load() {
			s.crds.trouble.Store(false)
		}
	}}
	inf := toolscache.NewSharedIndexInformerWithOptions(s.guard.listerWatcher("customresourcedefinitions", lw, hooks),
		&metav1.PartialObjectMetadata{}, toolscache.SharedIndexInformerOptions{})
	_ = inf.SetTransform(crdTransform)
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		s.crds.trouble.Store(true)
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	})
	changed := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if o, ok := obj.(client.Object); ok && names[o.GetName()] && s.crds.synced.Load() {
			select {
			case s.crds.trigger <- struct{}{}:
			default:
			}
		}
	}
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, n any) { changed(n) },
		DeleteFunc: changed,
	})
	s.crds.informer = inf
	go inf.RunWithContext(ctx)
	// Wait for the first list, unless it fails (no right to list CRDs).
	deadline := time.Now().Add(crdSyncWait)
	for !inf.HasSynced() && !s.crds.trouble.Load() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if inf.HasSynced() {
		s.crds.synced.Store(true)
		return
	}
	// Denied, or slow: poll until it syncs, then discover once more.
	go func() {
		if toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			s.crds.synced.Store(true)
			select {
			case s.crds.trigger <- struct{}{}:
			default:
			}
		}
	}()
}
