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
}

// WalkResult is the outcome of an upward walk.
type WalkResult struct {
	// Owner is the nearest tracked ancestor, nil when there is none.
	Owner *Owner
	// Hops is the number of ownerReferences followed.
	Hops int
	// Reason says why the walk ended without a tracked owner; empty when
	// Owner is set.
	Reason string
	// MissKind is the kind the walk could not pass (for the miss counter).
	MissKind string
	// Err is the read error behind a miss, if any.
	Err error
}

// Walker resolves the tracked owner of an object by following controller
// ownerReferences upward (seed §1).
type Walker struct {
	Registry *Registry
	Store    Store
}

// TrackedOwner walks up from obj, at most MaxWalkDepth hops, through kinds the
// registry knows, checking on every hop that the fetched owner's UID equals
// the reference's UID. An object without a controller owner costs no read.
func (w Walker) TrackedOwner(ctx context.Context, obj client.Object) WalkResult {
	cur := metav1.Object(obj)
	for hop := 1; ; hop++ {
		ref := metav1.GetControllerOfNoCopy(cur)
		if ref == nil {
			return WalkResult{Hops: hop - 1, Reason: ReasonRoot}
		}
		gk := RefGroupKind(ref)
		if hop > MaxWalkDepth {
			return WalkResult{Hops: hop - 1, Reason: ReasonDepthCap, MissKind: gk.String()}
		}
		entry, ok := w.Registry.Lookup(gk)
		if !ok {
			return WalkResult{Hops: hop, Reason: ReasonUntrackedKind, MissKind: gk.String()}
		}
		owner, err := GetMetadata(ctx, w.Store, entry, obj.GetNamespace(), ref.Name)
		if err != nil {
			return WalkResult{Hops: hop, Reason: classifyReadError(err), MissKind: gk.String(), Err: err}
		}
		if owner.GetUID() != ref.UID {
			return WalkResult{Hops: hop, Reason: ReasonUIDMismatch, MissKind: gk.String()}
		}
		if entry.Tracked() {
			if _, cycle := w.chain(ctx, owner)[obj.GetUID()]; cycle {
				return WalkResult{Hops: hop, Reason: ReasonCycle, MissKind: gk.String()}
			}
			return WalkResult{Hops: hop, Owner: &Owner{GroupKind: gk, Namespace: owner.GetNamespace(), Name: owner.GetName(), UID: string(owner.GetUID())}}
		}
		cur = owner
	}
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
