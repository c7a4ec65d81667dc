// Package profileloader loads declarative adapters from AIBOMAdapterProfile
// objects while the controller runs: a profile created, changed or deleted
// takes effect without a restart.
//
// Every change recomputes the whole set: each profile is compiled (a
// broken one is Accepted=False with the reason, and affects nothing
// else); profiles are then added in name order to the adapters the
// controller started with (in-tree, plugins, profile files), and one whose
// name or kinds another adapter already has is refused (KindClaimed), as
// for plugins. The registry is replaced in one step; the supervisor starts
// watches for the new kinds at once and reconciles again the roots of the
// kinds whose adapter changed.
package profileloader

import (
	"context"
	"fmt"
	"sort"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/profile"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

// Watches is what the loader needs of the supervisor.
type Watches interface {
	Rediscover()
	Replay(ctx context.Context, kinds []schema.GroupKind)
}

// Resyncer re-evaluates every workload (the reconciler).
type Resyncer interface {
	Resync(ctx context.Context, ratePerSecond float64) int
}

// Loader reconciles AIBOMAdapterProfile objects into the registry.
type Loader struct {
	Client   ctrl.Client
	Registry *graph.Registry
	// Static are the adapters the controller started with.
	Static  []adapter.Adapter
	Watches Watches
	// Roots re-evaluates every workload when a kind is no longer tracked.
	Roots Resyncer
	Log   logr.Logger

	// compiled keeps each profile's adapter by object name and generation:
	// a status update or a resync recompiles nothing, and an unchanged
	// profile keeps its adapter value (its kinds are not replayed).
	compiled map[string]compiledProfile
}

type compiledProfile struct {
	generation int64
	adapter    *profile.Adapter
	err        error
}

// Reconcile recomputes the adapters from every AIBOMAdapterProfile,
// whatever object the request names.
func (l *Loader) Reconcile(ctx context.Context, _ ctrlreconcile.Request) (ctrlreconcile.Result, error) {
	var list v1alpha1.AIBOMAdapterProfileList
	if err := l.Client.List(ctx, &list); err != nil {
		return ctrlreconcile.Result{}, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	seen := map[string]bool{}
	for _, p := range list.Items {
		seen[p.Name] = true
	}
	for name := range l.compiled {
		if !seen[name] {
			delete(l.compiled, name)
		}
	}

	adapters := append([]adapter.Adapter(nil), l.Static...)
	verdicts := make([]metav1.Condition, len(list.Items))
	for i := range list.Items {
		p := &list.Items[i]
		a, err := l.compile(p)
		if err != nil {
			verdicts[i] = condition(p, metav1.ConditionFalse, v1alpha1.ReasonProfileInvalid, err.Error())
			continue
		}
		candidate := append(append([]adapter.Adapter(nil), adapters...), a)
		if _, err := graph.NewRegistry(candidate...); err != nil {
			verdicts[i] = condition(p, metav1.ConditionFalse, v1alpha1.ReasonProfileClaimed, err.Error())
			continue
		}
		adapters = candidate
		verdicts[i] = condition(p, metav1.ConditionTrue, v1alpha1.ReasonProfileLoaded,
			fmt.Sprintf("adapter %q with %d kinds is registered", a.Name(), len(a.Kinds())))
	}
	trackedBefore := map[schema.GroupKind]bool{}
	for _, e := range l.Registry.TrackedEntries() {
		trackedBefore[e.GroupKind()] = true
	}
	added, changed, removed, err := l.Registry.SetAdapters(adapters...)
	if err != nil {
		// Every candidate set was checked above; this is a bug, not input.
		return ctrlreconcile.Result{}, fmt.Errorf("replacing the registry's adapters: %w", err)
	}
	if len(added)+len(changed)+len(removed) > 0 {
		l.Log.Info("adapter profiles changed the registered kinds", "added", names(added), "changed", names(changed), "removed", names(removed))
		l.Watches.Rediscover()
		l.Watches.Replay(ctx, changed)
	}
	var untracked []schema.GroupKind
	for gk := range trackedBefore {
		if !l.Registry.IsTracked(gk) {
			untracked = append(untracked, gk)
		}
	}
	if len(untracked) > 0 {
		// A kind no adapter tracks any more: its AIBOMs go (the adapter that
		// reported them is gone), and every workload is reconciled again,
		// so that what its objects absorbed is reported on its own.
		if k, ok := l.Roots.(interface{ KindsUntracked([]schema.GroupKind) }); ok {
			// The reconciler undoes a write racing with this pass, and
			// its periodic sweep deletes what the pass misses.
			k.KindsUntracked(untracked)
		}
		if err := l.deleteAIBOMsOf(ctx, untracked); err != nil {
			return ctrlreconcile.Result{}, err
		}
		n := l.Roots.Resync(ctx, 0)
		l.Log.Info("kinds no longer tracked: their AIBOMs were deleted and every workload is reconciled again",
			"kinds", names(untracked), "enqueued", n)
	}
	for i := range list.Items {
		p := &list.Items[i]
		old := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionAccepted)
		v := verdicts[i]
		if old != nil && old.Status == v.Status && old.Reason == v.Reason && old.Message == v.Message && p.Status.ObservedGeneration == p.Generation {
			continue
		}
		if v.Status == metav1.ConditionFalse {
			l.Log.Info("adapter profile refused", "profile", p.Name, "reason", v.Reason, "message", v.Message)
		}
		meta.SetStatusCondition(&p.Status.Conditions, v)
		p.Status.ObservedGeneration = p.Generation
		if err := l.Client.Status().Update(ctx, p); err != nil {
			return ctrlreconcile.Result{}, err
		}
	}
	return ctrlreconcile.Result{}, nil
}

// deleteAIBOMsOf deletes the AIBOMs this controller wrote for workloads of
// the given kinds.
func (l *Loader) deleteAIBOMsOf(ctx context.Context, kinds []schema.GroupKind) error {
	gone := map[schema.GroupKind]bool{}
	for _, gk := range kinds {
		gone[gk] = true
	}
	var list v1alpha1.AIBOMList
	if err := l.Client.List(ctx, &list, ctrl.MatchingLabels{reconcile.ManagedByLabel: reconcile.ManagedBy}); err != nil {
		return err
	}
	for i := range list.Items {
		a := &list.Items[i]
		gv, err := schema.ParseGroupVersion(a.Spec.Subject.APIVersion)
		if err != nil || !gone[schema.GroupKind{Group: gv.Group, Kind: a.Spec.Subject.Kind}] {
			continue
		}
		if err := l.Client.Delete(ctx, a); ctrl.IgnoreNotFound(err) != nil {
			return err
		}
		l.Log.Info("AIBOM deleted: its kind is no longer tracked", "namespace", a.Namespace, "aibom", a.Name,
			"kind", a.Spec.Subject.Kind, "workload", a.Spec.Subject.Name)
	}
	return nil
}

func (l *Loader) compile(p *v1alpha1.AIBOMAdapterProfile) (*profile.Adapter, error) {
	if c, ok := l.compiled[p.Name]; ok && c.generation == p.Generation {
		return c.adapter, c.err
	}
	a, err := profile.Compile(p.Spec, p.Name, profile.Origin("cluster:"+p.Name))
	if l.compiled == nil {
		l.compiled = map[string]compiledProfile{}
	}
	l.compiled[p.Name] = compiledProfile{generation: p.Generation, adapter: a, err: err}
	return a, err
}

func condition(p *v1alpha1.AIBOMAdapterProfile, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	const maxMessage = 1024
	if len(message) > maxMessage {
		message = message[:maxMessage] + "..."
	}
	return metav1.Condition{Type: v1alpha1.ConditionAccepted, Status: status, Reason: reason, Message: message,
		ObservedGeneration: p.Generation}
}

func names(gks []schema.GroupKind) []string {
	out := make([]string, len(gks))
	for i, gk := range gks {
		out[i] = gk.String()
	}
	sort.Strings(out)
	return out
}

// Setup registers the loader with the manager when the cluster serves
// AIBOMAdapterProfile; without the CRD, profiles from the cluster are off
// (logged) and everything else runs.
func Setup(mgr manager.Manager, l *Loader) (bool, error) {
	gk := schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "AIBOMAdapterProfile"}
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, v1alpha1.GroupVersion.Version); err != nil {
		if meta.IsNoMatchError(err) {
			l.Log.Info("the cluster does not serve AIBOMAdapterProfile (CRD not installed); adapter profiles are read from files only")
			return false, nil
		}
		return false, fmt.Errorf("adapter profiles: %w", err)
	}
	return true, builder.ControllerManagedBy(mgr).
		For(&v1alpha1.AIBOMAdapterProfile{}).
		Named("adapterprofile").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(l)
}
