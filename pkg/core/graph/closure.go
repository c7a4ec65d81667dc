package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// Descendants is what a root absorbs (seed §2).
type Descendants struct {
	// Tracked are the tracked workloads whose controller chain reaches the
	// root: listed on the root's document, not reported on their own. Read
	// for their metadata (MetadataReader): only kind and name are used.
	Tracked []client.Object
	// Pods are the pods whose controller chain reaches the root: their status
	// gives the running digests.
	Pods []*unstructured.Unstructured
	// Misses lists kinds the closure could not read (the walk degrades the
	// same way: their children stay roots).
	Misses []string
	// Unfit are the pods the closure reached outside the materialisation
	// path declared for them (adapter.Kind.PodOwners of their nearest
	// tracked ancestor): not attributed, their digests never counted.
	Unfit []UnfitPod
	// Live are the UIDs of the objects of kinds read live (the get/list
	// fallback, no events) the closure passed through: when one of them is
	// found gone, this root is re-evaluated.
	Live []types.UID
}

// UnfitPod is a pod whose controller is not a declared pod owner of the
// tracked workload it sits under.
type UnfitPod struct {
	// Name is the pod's name.
	Name string
	// Controller is the kind of the pod's controller.
	Controller schema.GroupKind
	// Workload is the nearest tracked ancestor (the root itself, or an
	// absorbed workload), as "<Kind>/<name>", and WorkloadKind its kind.
	Workload     string
	WorkloadKind schema.GroupKind
}

// LiveReads is implemented by a Store that reads some kinds live, without
// events (the get/list fallback).
type LiveReads interface {
	// ReadsLive reports whether a kind is read live.
	ReadsLive(e Entry) bool
}

// Owned returns the absorbed workloads, each as its OwnedIdentity, sorted
// (CompareOwned): the aibom.rollup.owned list and status.absorbed. Two kinds
// of the same name in different API groups never merge.
func (d Descendants) Owned() []string {
	out := make([]string, 0, len(d.Tracked))
	for _, o := range d.Tracked {
		out = append(out, OwnedIdentity(o.GetObjectKind().GroupVersionKind().GroupKind(), o.GetName()))
	}
	slices.SortFunc(out, CompareOwned)
	return out
}

// OwnedIdentity is how an absorbed workload is named on its root's document
// (aibom.rollup.owned.<i>) and in status.absorbed: "<Kind>.<group>/<name>",
// or "<Kind>/<name>" for the core group. A kind never contains "." or "/",
// and a name never contains "/", so the identity parses back
// (ParseOwnedIdentity) and two objects have the same identity only when
// they are the same object in one namespace.
func OwnedIdentity(gk schema.GroupKind, name string) string {
	if gk.Group == "" {
		return gk.Kind + "/" + name
	}
	return gk.Kind + "." + gk.Group + "/" + name
}

// ParseOwnedIdentity is the inverse of OwnedIdentity.
func ParseOwnedIdentity(s string) (schema.GroupKind, string, bool) {
	kindGroup, name, ok := strings.Cut(s, "/")
	if !ok || kindGroup == "" || name == "" {
		return schema.GroupKind{}, "", false
	}
	kind, group, _ := strings.Cut(kindGroup, ".")
	return schema.GroupKind{Group: group, Kind: kind}, name, true
}

// CompareOwned orders owned identities by kind, then group, then name (the
// document's order; the document package keeps the same rule).
func CompareOwned(a, b string) int {
	ag, an, _ := ParseOwnedIdentity(a)
	bg, bn, _ := ParseOwnedIdentity(b)
	return cmp.Or(strings.Compare(ag.Kind, bg.Kind), strings.Compare(ag.Group, bg.Group), strings.Compare(an, bn), strings.Compare(a, b))
}

// Closure finds a root's descendants through every registered kind, matched
// on UID through the controller-owner index.
type Closure struct {
	Registry *Registry
	Store    Store
	// TrackedOnly is for a caller that reads Tracked alone (the event
	// mapper's descendants): pods are listed by their metadata, as every
	// other descendant is, and Pods stays empty.
	TrackedOnly bool
}

type frontier struct {
	obj client.Object
	// depth is the number of hops from obj up to its nearest tracked
	// ancestor (0 for a tracked object). An object is a descendant only while
	// depth <= MaxWalkDepth: exactly when the upward walk from it would find
	// that ancestor.
	depth int
	// anchor is obj's nearest tracked ancestor (obj itself when tracked):
	// its declared pod owners decide which pods below it count.
	anchor     adapter.Kind
	anchorName string
}

// Descendants returns the objects whose controller chain reaches root. Each
// edge is accepted only when the child's controller reference names the
// parent by kind, name and UID, which is what the upward walk checks too, so
// that a workload is suppressed exactly when some root's closure lists it.
func (c Closure) Descendants(ctx context.Context, root client.Object) (Descendants, error) {
	var out Descendants
	entries := c.Registry.Entries()
	// Kinds read live (the get/list-only fallback) are listed at most once
	// per closure: one root reconcile.
	if ReadMemoFrom(ctx) == nil {
		ctx = WithReadMemo(ctx)
	}
	hints, _ := c.Store.(ControllerKindHints)
	live, _ := c.Store.(LiveReads)
	// The root's own controller chain. A tracked object on it that is also a
	// descendant shares an ownerReference cycle with the root: the walk makes
	// every tracked member of a cycle its own root, so none is absorbed.
	ownChain := Walker{Registry: c.Registry, Store: c.Store}.chain(ctx, root)
	seen := map[types.UID]bool{root.GetUID(): true}
	missed := map[string]bool{}
	rootKind, _ := c.Registry.Lookup(root.GetObjectKind().GroupVersionKind().GroupKind())
	queue := []frontier{{obj: root, anchor: rootKind.Kind, anchorName: root.GetName()}}
	// A kind that could not be read is a miss once per closure: it is not
	// asked again below the next parent (most registered kinds are not
	// served in a given cluster, and each ask builds an error).
	unreadable := make([]bool, len(entries))
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		parentGK := parent.obj.GetObjectKind().GroupVersionKind().GroupKind()
		for i, e := range entries {
			if unreadable[i] {
				continue
			}
			if hints != nil && !hints.MayBeControlledBy(e, parentGK) {
				continue // no object of this kind has a controller of the parent's kind
			}
			read := c.Store.ControlledBy
			if e.GroupKind() != PodGroupKind || c.TrackedOnly {
				// Pods are read whole (their status gives the digests);
				// every other descendant is listed by its metadata.
				read = func(ctx context.Context, e Entry, ns string, uid types.UID) ([]client.Object, error) {
					return ControlledByMetadata(ctx, c.Store, e, ns, uid)
				}
			}
			children, err := read(ctx, e, root.GetNamespace(), parent.obj.GetUID())
			if err != nil {
				if classifyReadError(err) == ReasonError {
					return Descendants{}, fmt.Errorf("closure of %s/%s: list %s: %w", root.GetNamespace(), root.GetName(), e.Kind.String(), err)
				}
				unreadable[i] = true
				if k := e.Kind.String(); !missed[k] {
					missed[k] = true
					out.Misses = append(out.Misses, k)
				}
				continue
			}
			for _, child := range children {
				ref := metav1.GetControllerOfNoCopy(child)
				if ref == nil || seen[child.GetUID()] || ref.UID != parent.obj.GetUID() ||
					ref.Name != parent.obj.GetName() || RefGroupKind(ref) != parentGK {
					continue
				}
				depth := parent.depth + 1
				if depth > MaxWalkDepth {
					continue
				}
				seen[child.GetUID()] = true
				if e.Tracked() && ownChain[child.GetUID()] {
					continue
				}
				next := frontier{obj: child, depth: depth, anchor: parent.anchor, anchorName: parent.anchorName}
				if live != nil && live.ReadsLive(e) {
					out.Live = append(out.Live, child.GetUID())
				}
				if e.Tracked() {
					out.Tracked = append(out.Tracked, child)
					next.depth, next.anchor, next.anchorName = 0, e.Kind, child.GetName()
				} else if e.GroupKind() == PodGroupKind {
					// A pod counts only through the path its workload
					// declares: a pod whose controller reference names a
					// Deployment directly is no replica of it. The pod
					// still connects what it controls (an LWS leader pod
					// controls its workers' StatefulSet), exactly as the
					// upward walk sees it.
					if !parent.anchor.AcceptsPodOwner(parentGK) {
						out.Unfit = append(out.Unfit, UnfitPod{Name: child.GetName(), Controller: parentGK,
							Workload: parent.anchor.Kind + "/" + parent.anchorName, WorkloadKind: parent.anchor.GroupKind()})
					} else if u, ok := child.(*unstructured.Unstructured); ok && !c.TrackedOnly {
						out.Pods = append(out.Pods, u)
					}
				}
				queue = append(queue, next)
			}
		}
	}
	sort.Slice(out.Pods, func(i, j int) bool { return out.Pods[i].GetName() < out.Pods[j].GetName() })
	sort.Slice(out.Unfit, func(i, j int) bool { return out.Unfit[i].Name < out.Unfit[j].Name })
	sort.Slice(out.Tracked, func(i, j int) bool {
		ki, kj := out.Tracked[i].GetObjectKind().GroupVersionKind().Kind, out.Tracked[j].GetObjectKind().GroupVersionKind().Kind
		if ki != kj {
			return ki < kj
		}
		return out.Tracked[i].GetName() < out.Tracked[j].GetName()
	})
	return out, nil
}
