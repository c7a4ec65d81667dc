package graph

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxWalkDepth is the most controller ownerReference hops the walk follows
// (seed §1). The closure applies the same bound, so that the walk and the
// closure agree on every object.
const MaxWalkDepth = 6

// Reasons a walk ends without a tracked owner.
const (
	// ReasonRoot: the object, or an ancestor of a walk-only kind, has no
	// controller owner. Not a miss.
	ReasonRoot = "root"
	// ReasonUntrackedKind: the controller owner is of a kind no enabled
	// adapter declares.
	ReasonUntrackedKind = "untracked_kind"
	// ReasonNotFound: the controller owner does not exist (deleted, or not
	// yet in the cache).
	ReasonNotFound = "not_found"
	// ReasonForbidden: the controller may not read the owner's kind.
	ReasonForbidden = "forbidden"
	// ReasonNoMatch: the owner's kind is not served (CRD absent).
	ReasonNoMatch = "no_match"
	// ReasonUIDMismatch: the object named by the reference has another UID
	// (an owner re-created under the same name).
	ReasonUIDMismatch = "uid_mismatch"
	// ReasonDepthCap: more than MaxWalkDepth hops without a tracked owner.
	ReasonDepthCap = "depth_cap"
	// ReasonCycle: the controller chain leads back to the object itself (an
	// ownerReference cycle, invalid in Kubernetes): every member of the cycle
	// is reported as its own root.
	ReasonCycle = "cycle"
	// ReasonNotSynced: the owner's kind is registered and served but its
	// cache has not synced yet (a restart, a version change, a watch that
	// never synced). Not a decision: the workload keeps its state (no AIBOM
	// created or deleted) until the kind is readable.
	ReasonNotSynced = "not_synced"
	// ReasonError: any other read error.
	ReasonError = "error"
)

// MaxClimb bounds the chain followed when checking for ownerReference cycles.
const MaxClimb = 64

// Owner identifies an object reached by the walk.
type Owner struct {
	GroupKind schema.GroupKind
	Namespace string
	Name      string
	UID       string
	// Generic marks a generic root: the topmost controller owner of a chain
	// that passes through no tracked kind (a kind no adapter declares, or a
	// walk-only object nothing controls). It reports what lies below it.
	Generic bool
	// Unread marks a generic root known only from the controller reference
	// that names it (its kind is not served, or the controller may not read
	// it): its identity is the reference's, its spec is not read.
	Unread bool
	// APIVersion is the owner's apiVersion, as its reference names it.
	APIVersion string
}

// WalkResult is the outcome of an upward walk.
type WalkResult struct {
	// Owner is the nearest tracked ancestor or, when the chain passes
	// through no tracked kind, the generic root above the object (Generic);
	// nil when there is none.
	Owner *Owner
	// Hops is the number of ownerReferences followed.
	Hops int
	// Reason says why the walk ended without a tracked owner; empty when a
	// tracked owner was found. A generic owner comes with the reason the
	// walk stopped above it (ReasonRoot at the top of a chain).
	Reason string
	// MissKind is the kind the walk could not pass (for the miss counter).
	MissKind string
	// Err is the read error behind a miss, if any.
	Err error

	// top is the topmost owner of a kind no adapter tracks read below the
	// point where the walk stopped (nil: none); settled marks a dangling
	// walk past its grace (Settle).
	top     *Owner
	settled bool
}

// Dangling reports whether the walk stopped at a controller reference whose
// owner is gone (not found) or was re-created under its name (another UID)
// while the reference is still there: the garbage collector is about to
// delete the object that holds it (a background deletion) or to orphan it
// by removing the reference. Such an object waits a grace period before it
// is decided a root (the reconciler's DanglingGrace), so that deleting an
// owner makes no short-lived AIBOM for each of its children.
func (w WalkResult) Dangling() bool {
	return w.Owner == nil && !w.settled && (w.Reason == ReasonNotFound || w.Reason == ReasonUIDMismatch)
}

// Top is the topmost owner of a kind no adapter tracks that the walk read
// below where it stopped (nil: none): for a dangling walk, the generic root
// candidate once its grace has passed.
func (w WalkResult) Top() *Owner { return w.top }

// Settle returns a dangling walk as it decides once its grace has passed:
// the chain ends below the missing owner, as if nothing controlled the
// object holding the reference, so the topmost owner read below it, if any,
// is the generic root (Owner, Generic), and otherwise the object the walk
// started from is the top of its chain. The reason stays (the miss is still
// counted as not found or a UID mismatch). Any other walk is returned as it
// is.
func (w WalkResult) Settle() WalkResult {
	if !w.Dangling() {
		return w
	}
	w.settled = true
	w.Owner = w.top
	return w
}

// Walker resolves the tracked owner of an object by following controller
// ownerReferences upward (seed §1).
type Walker struct {
	Registry *Registry
	Store    Store
}

// TrackedOwner walks up from obj, at most MaxWalkDepth hops, checking on every
// hop that the fetched owner's UID equals the reference's UID. It returns the
// nearest tracked ancestor. When the chain passes through no tracked kind, the
// topmost controller owner it reaches is a generic root and is returned as
// Owner with Generic set: a kind no adapter declares is followed like a
// walk-only kind where the controller may read it, and otherwise is the root
// as its reference names it (Unread). An object without a controller owner
// costs no read.
func (w Walker) TrackedOwner(ctx context.Context, obj client.Object) WalkResult {
	cur := metav1.Object(obj)
	var top *Owner // the topmost non-tracked owner read so far
	// visited holds the UIDs on the chain so far (a handful): a reference
	// back to one of them is a cycle.
	var visited map[types.UID]bool
	// stop ends a walk above top: top is the generic root when the chain
	// ends there (see endsChain).
	stop := func(res WalkResult) WalkResult {
		if top != nil && endsChain(res.Reason) {
			res.Owner = top
		}
		res.top = top
		return res
	}
	for hop := 1; ; hop++ {
		ref := metav1.GetControllerOfNoCopy(cur)
		if ref == nil {
			return stop(WalkResult{Hops: hop - 1, Reason: ReasonRoot})
		}
		gk := RefGroupKind(ref)
		if hop > MaxWalkDepth {
			if reason, ok := w.dangles(ctx, ref, obj.GetNamespace()); ok {
				// The reference past the cap dangles: as for one within
				// it, the chain ends below it once the grace has passed
				// (the closure from the top reaches this far).
				return stop(WalkResult{Hops: hop - 1, Reason: reason, MissKind: gk.String()})
			}
			return WalkResult{Hops: hop - 1, Reason: ReasonDepthCap, MissKind: gk.String()}
		}
		entry, ok := w.Registry.Lookup(gk)
		if !ok {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			_, referenced := w.Registry.Referenced(gk)
			if err != nil || gv.Version == "" || referenced || w.Registry.Disabled(gk) || w.Registry.ClusterScopedOwner(gk) {
				// A malformed reference, a kind that is only ever looked up
				// by name (never an owner), a disabled adapter's kind, or a
				// cluster-scoped owner: the chain ends below it.
				return stop(WalkResult{Hops: hop, Reason: ReasonUntrackedKind, MissKind: gk.String()})
			}
			if ref.UID == obj.GetUID() || visited[ref.UID] {
				// The reference names, by UID, an object already on this
				// chain: a cycle, no owner.
				return WalkResult{Hops: hop, Reason: ReasonCycle, MissKind: gk.String()}
			}
			// A kind no adapter declares: the root as its reference names
			// it, until (and unless) the controller may read the kind.
			w.Registry.NoteUnknownOwner(gv.WithKind(ref.Kind))
			return WalkResult{Hops: hop, Reason: ReasonUntrackedKind, MissKind: gk.String(), Owner: unreadOwner(ref, obj.GetNamespace())}
		}
		owner, err := GetMetadata(ctx, w.Store, entry, obj.GetNamespace(), ref.Name)
		if err != nil {
			reason := classifyReadError(err)
			if entry.Generic() && (reason == ReasonForbidden || reason == ReasonNoMatch) {
				return WalkResult{Hops: hop, Reason: reason, MissKind: gk.String(), Err: err, Owner: unreadOwner(ref, obj.GetNamespace())}
			}
			return stop(WalkResult{Hops: hop, Reason: reason, MissKind: gk.String(), Err: err})
		}
		if owner.GetUID() != ref.UID {
			return stop(WalkResult{Hops: hop, Reason: ReasonUIDMismatch, MissKind: gk.String()})
		}
		if entry.Tracked() {
			if _, cycle := w.chain(ctx, owner)[obj.GetUID()]; cycle {
				return WalkResult{Hops: hop, Reason: ReasonCycle, MissKind: gk.String()}
			}
			return WalkResult{Hops: hop, Owner: &Owner{GroupKind: gk, Namespace: owner.GetNamespace(), Name: owner.GetName(), UID: string(owner.GetUID()), APIVersion: ref.APIVersion}}
		}
		top = &Owner{GroupKind: gk, Namespace: owner.GetNamespace(), Name: owner.GetName(), UID: string(owner.GetUID()), Generic: true, APIVersion: ref.APIVersion}
		if visited == nil {
			visited = map[types.UID]bool{}
		}
		visited[owner.GetUID()] = true
		cur = owner
	}
}

// dangles reports whether ref names a registered owner that is gone (not
// found) or there under another UID, with the walk's reason for it; any
// other answer (readable, unreadable, not registered) is false.
func (w Walker) dangles(ctx context.Context, ref *metav1.OwnerReference, namespace string) (string, bool) {
	entry, ok := w.Registry.Lookup(RefGroupKind(ref))
	if !ok {
		return "", false
	}
	owner, err := GetMetadata(ctx, w.Store, entry, namespace, ref.Name)
	switch {
	case err != nil && classifyReadError(err) == ReasonNotFound:
		return ReasonNotFound, true
	case err == nil && owner.GetUID() != ref.UID:
		return ReasonUIDMismatch, true
	}
	return "", false
}

// unreadOwner is the generic root a controller reference names, unread.
func unreadOwner(ref *metav1.OwnerReference, namespace string) *Owner {
	return &Owner{GroupKind: RefGroupKind(ref), Namespace: namespace, Name: ref.Name, UID: string(ref.UID), Generic: true, Unread: true, APIVersion: ref.APIVersion}
}

// IsGenericRoot reports whether obj is a generic root: an object of a
// registered kind that is neither tracked nor referenced, whose walk (walk,
// from TrackedOwner) ends above it with no owner for a reason that decides
// (not a kind still syncing, a missing owner, or an error): a Pod nothing
// controls, say, or a ReplicaSet whose controller is of a referenced kind.
func (w Walker) IsGenericRoot(obj client.Object, walk WalkResult) bool {
	if walk.Owner != nil {
		return false
	}
	gk := obj.GetObjectKind().GroupVersionKind().GroupKind()
	if e, ok := w.Registry.Lookup(gk); !ok || e.Tracked() {
		return false
	}
	return walk.settled || endsChain(walk.Reason)
}

// endsChain reports whether a walk that stopped for reason makes the object
// it stopped at the top of its chain: nothing controls it, or its controller
// is of a kind the controller cannot read or a disabled adapter's. An owner
// not found or re-created (the garbage collector is about to act: it decides
// once its grace has passed, WalkResult.Settle), a kind not synced yet, a
// cycle, the depth cap or an error decide nothing.
func endsChain(reason string) bool {
	switch reason {
	case ReasonRoot, ReasonForbidden, ReasonNoMatch, ReasonUntrackedKind:
		return true
	}
	return false
}

// chain returns the UIDs of obj and of every object on its controller chain,
// followed through registered kinds with the same UID check as the walk, up
// to maxClimb hops or the first repeat. The walk uses it to recognise an
// ownerReference cycle, and the closure to never absorb a member of its
// root's own cycle. An object without a controller owner costs no read.
func (w Walker) chain(ctx context.Context, obj client.Object) map[types.UID]bool {
	seen := map[types.UID]bool{obj.GetUID(): true}
	cur := obj
	for i := 0; i < MaxClimb; i++ {
		ref := metav1.GetControllerOfNoCopy(cur)
		if ref == nil || seen[ref.UID] {
			if ref != nil {
				seen[ref.UID] = true
			}
			return seen
		}
		entry, ok := w.Registry.Lookup(RefGroupKind(ref))
		if !ok {
			return seen
		}
		next, err := GetMetadata(ctx, w.Store, entry, obj.GetNamespace(), ref.Name)
		if err != nil || next.GetUID() != ref.UID {
			return seen
		}
		seen[ref.UID] = true
		cur = next
	}
	return seen
}

// Root returns the root that reports obj: obj itself when it has no tracked
// owner (if it is tracked), or the topmost tracked ancestor reached by
// repeated walks. It returns nil when obj is not tracked and has no tracked
// owner.
func (w Walker) Root(ctx context.Context, obj client.Object) *Owner {
	var root *Owner
	if gk := obj.GetObjectKind().GroupVersionKind().GroupKind(); w.Registry.IsTracked(gk) {
		root = &Owner{GroupKind: gk, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}
	}
	seen := map[string]bool{string(obj.GetUID()): true}
	cur := obj
	for {
		res := w.TrackedOwner(ctx, cur)
		if res.Owner != nil && res.Owner.Generic {
			return res.Owner // the top of its chain
		}
		if res.Owner == nil || seen[res.Owner.UID] {
			return root
		}
		seen[res.Owner.UID] = true
		root = res.Owner
		entry, _ := w.Registry.Lookup(root.GroupKind)
		next, err := GetMetadata(ctx, w.Store, entry, root.Namespace, root.Name)
		if err != nil {
			return root
		}
		cur = next
	}
}

func RefGroupKind(ref *metav1.OwnerReference) schema.GroupKind {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupKind{Kind: ref.Kind}
	}
	return schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
}

func classifyReadError(err error) string {
	var notCached *cache.ErrResourceNotCached
	switch {
	case errors.Is(err, ErrKindNotSynced):
		return ReasonNotSynced
	case apierrors.IsNotFound(err):
		return ReasonNotFound
	case apierrors.IsForbidden(err):
		return ReasonForbidden
	case meta.IsNoMatchError(err), errors.As(err, &notCached), errors.Is(err, ErrKindNotReady):
		// A kind the cache does not hold is, to the walk, a kind it cannot
		// read: treated like an absent CRD.
		return ReasonNoMatch
	default:
		return ReasonError
	}
}
