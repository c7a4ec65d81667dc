// Package profileloader loads declarative adapters from AIBOMAdapterProfile
// objects while the controller runs: a profile created, changed or deleted
// takes effect without a restart.
//
// Every change recomputes the whole set: each profile is compiled (a
// broken one is Accepted=False with the reason, and affects nothing
// else: an edit that does not validate leaves the profile's last good
// version loaded, so no kind stops being tracked because of a typo);
// profiles are then added in name order to the adapters the
// controller started with (in-tree, plugins, profile files), and one whose
// name or kinds another adapter already has is refused (KindClaimed), as
// for plugins. The registry is replaced in one step; the supervisor starts
// watches for the new kinds at once and reconciles again the roots of the
// kinds whose adapter changed.
//
// Deleting a profile is deliberate, and still loses nothing silently: its
// kinds are no adapter's any more, so an object of such a kind that tops
// its ownership chain is a generic root and keeps its AIBOM (as such),
// with the workloads it absorbed still absorbed. After RemovalGrace the
// AIBOMs are re-verified (a resync), not deleted blindly: a profile
// re-created, or another adapter claiming the kind, takes them over, and
// only an AIBOM whose reconcile finds no root deletes itself.
package profileloader

import (
	"context"
	"fmt"
	"sort"
	"time"

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
	// RemovalGrace is how long the AIBOMs of a kind no adapter tracks any
	// more (its profile was deleted) are kept before they are deleted;
	// DefaultRemovalGrace when zero.
	RemovalGrace time.Duration
	// Now is the clock (time.Now when nil), for tests.
	Now func() time.Time

	// compiled keeps each profile's adapter by object name and generation:
	// a status update or a resync recompiles nothing, and an unchanged
	// profile keeps its adapter value (its kinds are not replayed).
	compiled map[string]compiledProfile
	// lastGood is each profile's last version that compiled: it stays
	// loaded while a later edit does not validate.
	lastGood map[string]compiledProfile
	// retiring holds the kinds no adapter tracks any more, with the time
	// their AIBOMs are deleted unless the kind is claimed again.
	retiring map[schema.GroupKind]time.Time
}

// DefaultRemovalGrace is RemovalGrace when unset.
const DefaultRemovalGrace = 10 * time.Minute

type compiledProfile struct {
	generation int64
	adapter    *profile.Adapter
	err        error
}

func (l *Loader) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Loader) grace() time.Duration {
	if l.RemovalGrace > 0 {
		return l.RemovalGrace
	}
	return DefaultRemovalGrace
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
	for name := range l.lastGood {
		if !seen[name] {
			delete(l.lastGood, name)
		}
	}

	adapters := append([]adapter.Adapter(nil), l.Static...)
	verdicts := make([]metav1.Condition, len(list.Items))
	for i := range list.Items {
		p := &list.Items[i]
		a, err := l.compile(p)
		if err != nil {
			// Last good version wins: an edit that does not validate keeps
			// the version before it loaded (and its kinds tracked).
			good, ok := l.lastGood[p.Name]
			if !ok {
				verdicts[i] = condition(p, metav1.ConditionFalse, v1alpha1.ReasonProfileInvalid, err.Error())
				continue
			}
			candidate := append(append([]adapter.Adapter(nil), adapters...), good.adapter)
			if _, cerr := graph.NewRegistry(candidate...); cerr == nil {
				adapters = candidate
			}
			verdicts[i] = condition(p, metav1.ConditionFalse, v1alpha1.ReasonProfileInvalid,
				fmt.Sprintf("generation %d does not validate, generation %d stays loaded: %v", p.Generation, good.generation, err))
			continue
		}
		candidate := append(append([]adapter.Adapter(nil), adapters...), a)
		if _, err := graph.NewRegistry(candidate...); err != nil {
			verdicts[i] = condition(p, metav1.ConditionFalse, v1alpha1.ReasonProfileClaimed, err.Error())
			continue
		}
		adapters = candidate
		if l.lastGood == nil {
			l.lastGood = map[string]compiledProfile{}
		}
		l.lastGood[p.Name] = compiledProfile{generation: p.Generation, adapter: a}
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
	now := l.now()
	if len(untracked) > 0 {
		// A kind no adapter tracks any more (its profile was deleted):
		// every workload is reconciled again at once, so that what its
		// objects absorbed reports on its own without a gap; its own AIBOMs
		// are kept for the grace period, in case the kind is claimed again.
		if l.retiring == nil {
			l.retiring = map[schema.GroupKind]time.Time{}
		}
		for _, gk := range untracked {
			l.retiring[gk] = now.Add(l.grace())
		}
		n := l.Roots.Resync(ctx, 0)
		l.Log.Info("kinds no longer tracked: every workload is reconciled again; their AIBOMs are kept until the grace period ends",
			"kinds", names(untracked), "enqueued", n, "deleteAfter", now.Add(l.grace()).UTC().Format(time.RFC3339))
	}
	requeue, err := l.retire(ctx, now)
	if err != nil {
		return ctrlreconcile.Result{}, err
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
	return ctrlreconcile.Result{RequeueAfter: requeue}, nil
}

// retire forgets the retiring kinds an adapter claimed again, deletes the
// AIBOMs of those whose grace period is over, and returns when to look
// again (0: nothing is retiring).
func (l *Loader) retire(ctx context.Context, now time.Time) (time.Duration, error) {
	var due []schema.GroupKind
	var next time.Duration
	for gk, deadline := range l.retiring {
		switch {
		case l.Registry.IsTracked(gk):
			delete(l.retiring, gk)
			l.Log.Info("kind tracked again within its grace period: its AIBOMs are kept", "kind", gk.String())
		case !now.Before(deadline):
			due = append(due, gk)
		default:
			if d := deadline.Sub(now); next == 0 || d < next {
				next = d
			}
		}
	}
	if len(due) == 0 {
		return next, nil
	}
	// The grace period is over: the AIBOMs of those kinds are re-verified,
	// not deleted blindly. An object of a kind no adapter tracks that is
	// still the top of its chain is a generic root and keeps its AIBOM (as
	// such); the others are deleted by their reconcile.
	n := l.Roots.Resync(ctx, 0)
	for _, gk := range due {
		delete(l.retiring, gk)
	}
	l.Log.Info("grace period over for kinds no longer tracked: their AIBOMs are re-verified (generic roots keep theirs)", "kinds", names(due), "enqueued", n)
	return next, nil
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
