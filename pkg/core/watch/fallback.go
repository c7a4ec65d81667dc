package watch

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// The get/list-only fallback (seed §5: Grove kinds are granted get and list,
// never watch). A walk-only kind the controller may read but not watch gets
// no informer; it is read live, as metadata only:
//
//   - a walk hop is one live GET (the walk checks the UID as always);
//   - a closure lists the kind's namespace at most once, through a ReadMemo
//     that lives as long as that closure (one root reconcile), and finds
//     children in that list;
//   - its objects raise no events: a pod's events still reach the root
//     through live GETs of the chain above the pod.
//
// Tracked kinds and Pods are never on this path: their content and events
// are what a document is made of. A kind that may not be read (get and list)
// either is left to its informer, whose failures degrade as for any unreadable kind
// (report as today, counted in aibom_rollup_unresolved_total).

var watchFallback = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "aibom_watch_fallback",
	Help: "1 while a walk-only kind the controller may get and list but not watch is read live (one metadata list per kind per root reconcile) instead of through an informer.",
}, []string{"kind"})

var genericUnreadable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "aibom_generic_owner_kind_unreadable",
	Help: "1 for a controller owner kind no adapter declares that the controller may not list and watch: its objects are generic roots as their children's references name them, their specs unread.",
}, []string{"kind"})

func init() { metrics.Registry.MustRegister(watchFallback, genericUnreadable) }

// FallbackKinds returns the kinds currently served by live reads.
func (s *Supervisor) FallbackKinds() []schema.GroupKind {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []schema.GroupKind
	for gk, kw := range s.kinds {
		if kw.fallback {
			out = append(out, gk)
		}
	}
	return out
}

// fallbackCandidate: only walk-only kinds read as metadata may be read live.
func fallbackCandidate(e graph.Entry) bool { return !graph.NeedsFullObject(e) }

// needsFallback reports whether the controller may get and list but not
// watch a kind, asking the API server (SelfSubjectAccessReview, cluster-wide). On an
// error the kind is left as it is (an informer at start).
func (s *Supervisor) needsFallback(ctx context.Context, e graph.Entry) (bool, error) {
	if s.authz == nil || !fallbackCandidate(e) {
		return false, nil
	}
	allowed := func(verb string) (bool, error) { return s.allowed(ctx, e, verb) }
	watch, err := allowed("watch")
	if err != nil || watch {
		return false, err
	}
	// Both reads are needed: the walk GETs, the closure LISTs, and they
	// must see the same objects (a workload is suppressed exactly when a
	// closure lists it). Without either, the kind is unreadable: its
	// informer degrades as for any denied kind, for the walk and the
	// closure alike, without a live request per walk.
	for _, verb := range []string{"list", "get"} {
		if ok, err := allowed(verb); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// allowed asks the API server whether the controller may use verb on a
// kind's resource cluster-wide (SelfSubjectAccessReview).
func (s *Supervisor) allowed(ctx context.Context, e graph.Entry, verb string) (bool, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	review, err := s.authz.SelfSubjectAccessReviews().Create(rctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: e.Group, Version: e.Version, Resource: e.Resource,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("review %s on %s: %w", verb, e.Kind.String(), err)
	}
	return review.Status.Allowed, nil
}

// startFallback serves a kind by live reads.
func (s *Supervisor) startFallback(ctx context.Context, e graph.Entry) {
	kctx, cancel := context.WithCancel(ctx)
	kw := &kindWatch{entry: e, cancel: cancel, fallback: true, owners: s.ownerKindsOf(e.GroupKind())}
	s.mu.Lock()
	s.kinds[e.GroupKind()] = kw
	s.mu.Unlock()
	watchFallback.WithLabelValues(e.Kind.String()).Set(1)
	if _, logged := s.fallbackLogged.LoadOrStore(e.GroupKind(), true); !logged {
		s.Log.Info("kind may be listed but not watched; read live as metadata (one list per kind per root reconcile), without events",
			"kind", e.Kind.String(), "version", e.Version)
	}
	s.crdBacked(kctx, kw)
	// The first probe that succeeds replays the kind's roots (probeKind).
	go s.probeKind(kctx, kw)
}

// syncFallback makes a kind on the fallback readable: one cluster-wide
// metadata list records the kinds of controller its objects have
// (MayBeControlledBy), so that closures list the kind only below such a
// kind, as they query a cached kind. Live reads made later (walk hops,
// closures' lists) keep the record growing.
func (s *Supervisor) syncFallback(ctx context.Context, kw *kindWatch) error {
	if _, err := s.liveList(ctx, kw, metav1.NamespaceAll); err != nil {
		return err
	}
	kw.synced.Store(true)
	return nil
}

// replayRoots enqueues the root above every object of a kind that just
// became readable: walks that passed through it before found it unreadable.
// An informer replays its objects when it syncs; this is the same for a kind
// read live, with one list and the walks' GETs.
func (s *Supervisor) replayRoots(ctx context.Context, kw *kindWatch) {
	if !s.Events.Leading() {
		return // a follower: ReplayAll runs once it leads
	}
	ctx = graph.WithReadMemo(ctx)
	objs, err := s.InNamespace(ctx, kw.entry, metav1.NamespaceAll)
	if err != nil {
		s.Log.Error(err, "replaying a live-read kind's roots", "kind", kw.entry.Kind.String())
		return
	}
	walker := graph.Walker{Registry: s.Registry, Store: s}
	seen := map[types.UID]bool{}
	for _, obj := range objs {
		if root := walker.Root(ctx, obj); root != nil && !seen[types.UID(root.UID)] {
			seen[types.UID(root.UID)] = true
			s.Events.Reconcile(root.GroupKind, root.Namespace, root.Name)
		}
	}
}

// liveGet reads one object of a kind on the fallback: from the memo's list of
// its namespace when there is one, else one live metadata GET.
func (s *Supervisor) liveGet(ctx context.Context, kw *kindWatch, namespace, name string) (client.Object, error) {
	e := kw.entry
	memo := graph.ReadMemoFrom(ctx)
	if o := memo.Lookup(e.GroupKind(), namespace, name); o != nil {
		return o, nil
	}
	// Not listed, or not in the list (it may be younger than the list):
	// read it.
	return memo.Get(e.GroupKind(), namespace, name, func() (client.Object, error) {
		obj, err := s.meta.Resource(e.GroupVersionResourceServed()).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", e.Kind.String(), namespace, name, err)
		}
		obj.SetGroupVersionKind(e.GVK())
		_, _ = graph.TransformMetadata(obj)
		s.recordController(e, obj)
		return obj, nil
	})
}

// liveList lists a kind's namespace (metav1.NamespaceAll: every namespace),
// once per memo.
func (s *Supervisor) liveList(ctx context.Context, kw *kindWatch, namespace string) ([]client.Object, error) {
	e := kw.entry
	return graph.ReadMemoFrom(ctx).List(e.GroupKind(), namespace, func() ([]client.Object, error) {
		// One request, not pages: the count of requests per reconcile is
		// the point of the memo, and metadata lists are small.
		list, err := s.meta.Resource(e.GroupVersionResourceServed()).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list %s in %q: %w", e.Kind.String(), namespace, err)
		}
		out := make([]client.Object, len(list.Items))
		for i := range list.Items {
			item := &list.Items[i]
			item.SetGroupVersionKind(e.GVK())
			_, _ = graph.TransformMetadata(item)
			s.recordController(e, item)
			out[i] = item
		}
		return out, nil
	})
}

// recordController adds the kind of an object's controller to its kind's
// record (MayBeControlledBy), as the informer transform does for cached
// kinds.
func (s *Supervisor) recordController(e graph.Entry, obj client.Object) {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		s.ownerKindsOf(e.GroupKind()).add(graph.RefGroupKind(ref))
	}
}

// liveControlledBy returns the objects of a kind on the fallback whose
// controller is uid, filtered from the memoised list of the namespace.
func (s *Supervisor) liveControlledBy(ctx context.Context, kw *kindWatch, namespace string, uid types.UID) ([]client.Object, error) {
	objs, err := s.liveList(ctx, kw, namespace)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for _, o := range objs {
		if ref := metav1.GetControllerOfNoCopy(o); ref != nil && ref.UID == uid {
			out = append(out, o)
		}
	}
	return out, nil
}
