// Package tree shows the roll-up: for every root workload the scan reports,
// the objects its document covers, as the ownership forest the controller
// walks (like "kubectl tree"): the tracked workloads it absorbed, the
// walk-only objects in between, the pods with the digests they run, and for
// every node why it is, or is not, a root. Membership and reasons come from
// pkg/core (Walker, Closure), never from a second reading of ownership.
package tree

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/internal/scan"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Role is what a node is to the roll-up.
type Role string

// Roles of nodes.
const (
	// RoleRoot: a tracked workload without a tracked owner; it gets a
	// document.
	RoleRoot Role = "root"
	// RoleAbsorbed: a tracked workload whose controller chain reaches a
	// tracked owner; listed in its root's document, no document of its own.
	RoleAbsorbed Role = "absorbed"
	// RoleWalkOnly: an object of a walk-only kind the walk passes through
	// (a ReplicaSet, a Grove PodClique).
	RoleWalkOnly Role = "walk-only"
	// RolePod: a pod whose running digests count for the root.
	RolePod Role = "pod"
	// RoleUnattributed: a pod the closure reached outside the path its
	// workload declares for pods: its digests are not counted.
	RoleUnattributed Role = "not-attributed"
	// RoleOutside: an object of the ownership graph under no root.
	RoleOutside Role = "outside"
)

// Container is one container status of a pod.
type Container struct {
	// Name is the container's name; Init marks an init container.
	Name string
	Init bool
	// Digest is the running digest ("sha256:..."), "" while the image is
	// pulled or when the status names none.
	Digest string
}

// Node is one object of the forest.
type Node struct {
	Kind      schema.GroupKind
	Namespace string
	Name      string
	UID       types.UID
	Role      Role
	// Why says why the node is, or is not, a root.
	Why string
	// Containers are a pod's container statuses.
	Containers []Container
	Children   []*Node
}

// Label is "Kind/name".
func (n *Node) Label() string { return n.Kind.Kind + "/" + n.Name }

// Forest is the roll-up of a scan.
type Forest struct {
	// Roots are the reported roots, in the scan's order.
	Roots []*Node
	// Outside are the objects of registered walk-only kinds under no root
	// (a ReplicaSet whose Deployment is missing), each with why.
	Outside []*Node
}

// Build lays out the forest of roots (scan.Evaluate's, over store, which
// holds objects). A root's members are its closure (graph.Closure: absorbed
// workloads, attributed and unattributed pods) and the walk-only objects
// whose walk (graph.Walker.Root) ends at it; each hangs under its
// controller. Unmatched roots are said to have no AI signal.
func Build(ctx context.Context, reg *graph.Registry, store graph.Store, objects []client.Object, roots []scan.Root) Forest {
	walker := graph.Walker{Registry: reg, Store: store}
	var f Forest
	rootOf := map[types.UID]int{} // root UID -> index in roots
	for i, r := range roots {
		rootOf[r.Object.GetUID()] = i
	}
	// Walk-only objects by root; those under none are outside.
	walkOnly := make([][]client.Object, len(roots))
	for _, o := range objects {
		gk := o.GetObjectKind().GroupVersionKind().GroupKind()
		e, ok := reg.Lookup(gk)
		if !ok || e.Tracked() || gk == graph.PodGroupKind {
			continue
		}
		root := walker.Root(ctx, o)
		if root == nil {
			n := newNode(o, RoleOutside)
			n.Why = "under no root: " + walkReason(walker.TrackedOwner(ctx, o))
			f.Outside = append(f.Outside, n)
			continue
		}
		if i, ok := rootOf[types.UID(root.UID)]; ok {
			walkOnly[i] = append(walkOnly[i], o)
		}
	}
	sortNodes(f.Outside)

	for i, r := range roots {
		top := newNode(r.Object, RoleRoot)
		top.Why = walkReason(walker.TrackedOwner(ctx, r.Object))
		if r.Report.Unmatched {
			top.Why += "; no AI signal (reported with --report=all only)"
		}
		byUID := map[types.UID]*Node{top.UID: top}
		var members []client.Object
		add := func(o client.Object, n *Node) {
			byUID[n.UID] = n
			members = append(members, o)
		}
		for _, o := range r.Descendants.Tracked {
			n := newNode(o, RoleAbsorbed)
			res := walker.TrackedOwner(ctx, o)
			switch {
			case res.Owner != nil && res.Owner.Generic:
				n.Why = fmt.Sprintf("generic root %s/%s, a kind no enabled adapter tracks (%s)", res.Owner.GroupKind.String(), res.Owner.Name, hops(res.Hops))
			case res.Owner != nil:
				n.Why = fmt.Sprintf("tracked owner %s/%s found (%s)", res.Owner.GroupKind.Kind, res.Owner.Name, hops(res.Hops))
			}
			add(o, n)
		}
		for _, o := range walkOnly[i] {
			n := newNode(o, RoleWalkOnly)
			e, _ := reg.Lookup(n.Kind)
			n.Why = fmt.Sprintf("walk-only kind (adapter %s): passes ownership up", e.Adapter.Name())
			add(o, n)
		}
		for _, p := range r.Descendants.Pods {
			n := newNode(p, RolePod)
			n.Containers = containers(p)
			n.Why = "running digests count: " + describeContainers(n.Containers)
			add(p, n)
		}
		for _, u := range r.Descendants.Unfit {
			p, err := store.Get(ctx, podEntry(reg), r.Object.GetNamespace(), u.Name)
			if err != nil {
				continue
			}
			n := newNode(p, RoleUnattributed)
			n.Why = fmt.Sprintf("its controller, a %s, is not how %s runs pods: digests not counted", u.Controller.Kind, u.Workload)
			if pu, ok := p.(*unstructured.Unstructured); ok {
				n.Containers = containers(pu)
			}
			add(p, n)
		}
		for _, o := range members {
			n := byUID[o.GetUID()]
			parent := top
			if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
				if p, ok := byUID[ref.UID]; ok {
					parent = p
				}
			}
			parent.Children = append(parent.Children, n)
		}
		var order func(n *Node)
		order = func(n *Node) {
			sortNodes(n.Children)
			for _, c := range n.Children {
				order(c)
			}
		}
		order(top)
		f.Roots = append(f.Roots, top)
	}
	return f
}

func podEntry(reg *graph.Registry) graph.Entry {
	e, _ := reg.Lookup(graph.PodGroupKind)
	return e
}

func newNode(o client.Object, role Role) *Node {
	return &Node{Kind: o.GetObjectKind().GroupVersionKind().GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName(), UID: o.GetUID(), Role: role}
}

// sortNodes orders siblings by kind, then name.
func sortNodes(nodes []*Node) {
	sort.SliceStable(nodes, func(i, j int) bool {
		if nodes[i].Kind.Kind != nodes[j].Kind.Kind {
			return nodes[i].Kind.Kind < nodes[j].Kind.Kind
		}
		if nodes[i].Namespace != nodes[j].Namespace {
			return nodes[i].Namespace < nodes[j].Namespace
		}
		return nodes[i].Name < nodes[j].Name
	})
}

func hops(n int) string {
	if n == 1 {
		return "1 hop"
	}
	return fmt.Sprintf("%d hops", n)
}

// walkReason says, for an object the walk found no tracked owner for, why.
func walkReason(res graph.WalkResult) string {
	switch res.Reason {
	case graph.ReasonRoot:
		if res.Hops == 0 {
			return "no controller owner"
		}
		return fmt.Sprintf("no tracked owner: the controller chain ends after %s", hops(res.Hops))
	case graph.ReasonUntrackedKind:
		return fmt.Sprintf("its controller is a %s, a kind no enabled adapter declares (untracked kind)", res.MissKind)
	case graph.ReasonNotFound:
		return fmt.Sprintf("its controller, a %s, is not there (not found)", res.MissKind)
	case graph.ReasonUIDMismatch:
		return fmt.Sprintf("the %s its controller reference names has another UID (UID mismatch: a re-created owner)", res.MissKind)
	case graph.ReasonDepthCap:
		return fmt.Sprintf("more than %d ownerReference hops without a tracked owner (depth cap)", graph.MaxWalkDepth)
	case graph.ReasonCycle:
		return fmt.Sprintf("its controller chain through %s leads back to it (ownerReference cycle)", res.MissKind)
	case "":
		if res.Owner != nil {
			return fmt.Sprintf("tracked owner %s/%s found (%s)", res.Owner.GroupKind.Kind, res.Owner.Name, hops(res.Hops))
		}
	}
	return fmt.Sprintf("cannot read its controller, a %s (%s)", res.MissKind, strings.ReplaceAll(res.Reason, "_", " "))
}

// containers reads a pod's container statuses (init containers first).
func containers(p *unstructured.Unstructured) []Container {
	var out []Container
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		list, _, _ := unstructured.NestedSlice(p.Object, "status", field)
		for _, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			name, _ := m["name"].(string)
			imageID, _ := m["imageID"].(string)
			c := Container{Name: name, Init: field == "initContainerStatuses"}
			if _, d, ok := digest.ParseImageID(imageID); ok {
				c.Digest = d
			}
			out = append(out, c)
		}
	}
	return out
}

// shortDigest is "sha256:" and the first 12 hex digits.
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

func describeContainers(cs []Container) string {
	if len(cs) == 0 {
		return "no container status yet"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		d := "pulling"
		if c.Digest != "" {
			d = shortDigest(c.Digest)
		}
		name := c.Name
		if c.Init {
			name += " (init)"
		}
		parts[i] = name + " " + d
	}
	return strings.Join(parts, ", ")
}
