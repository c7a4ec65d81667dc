package reconcile

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/pkg/adapter/generic"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Pod attributions, as the coverage report counts them.
const (
	// AttributedTracked: the pod's chain reaches a tracked workload.
	AttributedTracked = "tracked"
	// AttributedGeneric: the pod's chain ends at a generic root (or the pod
	// is one).
	AttributedGeneric = "generic"
	// AttributedNone: the pod is in no AIBOM (its chain passes the depth
	// cap or a cycle, or a kind on it has not synced). Zero in steady state;
	// a pod whose controller is gone counts where it reports once the
	// dangling-owner grace has passed.
	AttributedNone = "none"
)

var podAttribution = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "aibom_pods_attribution",
	Help: "Pods of opted-in namespaces by where the ownership walk attributes them, set by each re-verification pass: \"tracked\" (under a tracked workload), \"generic\" (under a generic root, or a bare pod), \"none\" (in no AIBOM; 0 in steady state).",
}, []string{"namespace", "attribution"})

func init() { metrics.Registry.MustRegister(podAttribution) }

// Coverage counts a namespace's pods by attribution.
type Coverage map[string]int

// PodCoverage attributes every pod of the namespaces keep selects (nil: all)
// the way the reconciler does, by namespace. With aiOnly, only pods whose
// spec carries an AI signal are counted (the offline scan: manifests carry
// specs; the controller's cache keeps a pod's spec only where it may be read
// as a generic root's, so the controller counts every pod).
func PodCoverage(ctx context.Context, reg *graph.Registry, store graph.Store, keep func(namespace string) bool, aiOnly bool) (map[string]Coverage, error) {
	pods, ok := reg.Lookup(graph.PodGroupKind)
	if !ok {
		return nil, nil
	}
	objs, err := store.InNamespace(ctx, pods, metav1.NamespaceAll)
	if err != nil {
		return nil, err
	}
	walker := graph.Walker{Registry: reg, Store: store}
	out := map[string]Coverage{}
	for _, p := range objs {
		if keep != nil && !keep(p.GetNamespace()) {
			continue
		}
		if aiOnly {
			u, isU := p.(*unstructured.Unstructured)
			if !isU {
				continue
			}
			f, err := generic.Scrape(ctx, u)
			if err != nil {
				continue
			}
			if _, ai := f.Match(); !ai {
				continue
			}
		}
		if p.GetObjectKind().GroupVersionKind().Empty() {
			p.GetObjectKind().SetGroupVersionKind(pods.GVK())
		}
		// As decided past the dangling-owner grace (the steady state): a
		// pod whose controller is gone is attributed where it reports once
		// the grace has passed.
		walk := walker.TrackedOwner(ctx, p).Settle()
		attribution := AttributedNone
		switch {
		case walk.Owner != nil && walk.Owner.Generic, walker.IsGenericRoot(p, walk):
			attribution = AttributedGeneric
		case walk.Owner != nil:
			attribution = AttributedTracked
		}
		if out[p.GetNamespace()] == nil {
			out[p.GetNamespace()] = Coverage{}
		}
		out[p.GetNamespace()][attribution]++
	}
	return out, nil
}

// recordCoverage sets the pod attribution gauge from a pass over the caches.
func (r *Reconciler) recordCoverage(ctx context.Context) {
	keep := func(ns string) bool { return r.Mapper == nil || r.Mapper.optedIn(ns) }
	cov, err := PodCoverage(ctx, r.Registry, r.Store, keep, false)
	if err != nil {
		return // pods unreadable now: the next pass
	}
	podAttribution.Reset()
	for ns, c := range cov {
		for _, a := range []string{AttributedTracked, AttributedGeneric, AttributedNone} {
			podAttribution.WithLabelValues(ns, a).Set(float64(c[a]))
		}
	}
}
