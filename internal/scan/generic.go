package scan

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/generic"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/core/watch"
)

// GenericAdapterName names the reader of kinds no adapter knows in
// documents (Root.Entry.Adapter.Name()).
const GenericAdapterName = "generic"

// genericAdapter reads an object of a kind no adapter knows with
// generic.Scrape.
type genericAdapter struct{}

func (genericAdapter) Name() string          { return GenericAdapterName }
func (genericAdapter) Kinds() []adapter.Kind { return nil }
func (genericAdapter) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	return generic.Scrape(ctx, obj)
}

// genericRoots reads, with generic.Scrape, the objects of objs that no
// adapter reads: objects of kinds no adapter knows (a custom resource of an
// operator without an adapter or profile) and Pods nobody controls. One
// that shows an AI signal (a runtime, a model, a framework, model storage,
// an accelerator) is a root of its own (Root.Generic) unless
//
//   - its controller is in the input (the owner is the one to report), or
//   - a tracked object of the input is below it on a controller chain:
//     that workload is reported, as before, with what its pod templates
//     say.
//
// One without an AI signal is left out, even when every root is reported:
// the loader's note counts it. Its pods (controlled by it directly, or the
// Pod itself) give the running digests.
func genericRoots(ctx context.Context, reg *graph.Registry, objs []client.Object, opts Options) ([]Root, error) {
	uids := map[types.UID]bool{}
	for _, o := range objs {
		uids[o.GetUID()] = true
	}
	byUID := map[types.UID]client.Object{}
	for _, o := range objs {
		byUID[o.GetUID()] = o
	}
	// The controller chains above tracked objects, and the pods of each
	// controller.
	controlsTracked := map[types.UID]bool{}
	pods := map[types.UID][]*unstructured.Unstructured{}
	for _, o := range objs {
		ref := metav1.GetControllerOfNoCopy(o)
		if ref == nil {
			continue
		}
		gk := o.GetObjectKind().GroupVersionKind().GroupKind()
		if e, ok := reg.Lookup(gk); ok && e.Tracked() {
			for cur, hops := ref, 0; cur != nil && hops < graph.MaxClimb && !controlsTracked[cur.UID]; hops++ {
				controlsTracked[cur.UID] = true
				owner, ok := byUID[cur.UID]
				if !ok {
					break
				}
				cur = metav1.GetControllerOfNoCopy(owner)
			}
		}
		if u, ok := o.(*unstructured.Unstructured); ok && gk == graph.PodGroupKind {
			pods[ref.UID] = append(pods[ref.UID], u)
		}
	}
	var out []Root
	for _, o := range objs {
		gvk := o.GetObjectKind().GroupVersionKind()
		gk := gvk.GroupKind()
		if !readGenerically(reg, gk) {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(o); ref != nil && (gk == graph.PodGroupKind || uids[ref.UID]) {
			continue
		}
		if controlsTracked[o.GetUID()] {
			continue
		}
		if opts.Namespace != nil && o.GetNamespace() != "" && !opts.Namespace(o.GetNamespace()) {
			continue
		}
		u, err := asUnstructured(o)
		if err != nil {
			return nil, err
		}
		desc := graph.Descendants{Pods: pods[o.GetUID()]}
		if gk == graph.PodGroupKind {
			desc.Pods = []*unstructured.Unstructured{u}
		}
		if t, err := watch.TransformTracked(u.DeepCopy()); err == nil {
			if tu, ok := t.(*unstructured.Unstructured); ok {
				u = tu
			}
		}
		entry := graph.Entry{
			Kind: adapter.Kind{Group: gk.Group, Kind: gk.Kind, Resource: strings.ToLower(gk.Kind) + "s",
				Versions: []string{gvk.Version}, Role: adapter.RoleTracked, PodOwners: []schema.GroupKind{gk}},
			Adapter: genericAdapter{},
			Version: gvk.Version,
		}
		rep := reconcile.BuildReport(ctx, entry, u, desc, opts.Tool, opts.MaxDocumentBytes)
		if rep.Unmatched && rep.ScrapeErr == nil {
			continue
		}
		out = append(out, Root{Entry: entry, Object: u, Descendants: desc, Report: rep, AIBOMName: reconcile.AIBOMName(gk, u.GetName()), Generic: true})
	}
	return out, nil
}

// readGenerically reports whether objects of gk are read by no adapter:
// a kind the registry does not know, or Pod (the core's walk-only kind).
func readGenerically(reg *graph.Registry, gk schema.GroupKind) bool {
	if gk == namespaceGK {
		return false
	}
	if gk == graph.PodGroupKind {
		e, ok := reg.Lookup(gk)
		return !ok || !e.Tracked()
	}
	if _, ok := reg.Lookup(gk); ok {
		return false
	}
	_, ok := reg.Referenced(gk)
	return !ok
}
