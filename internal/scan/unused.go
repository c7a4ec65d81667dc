package scan

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/core/watch"
)

// refKey names a referenced object: its kind, namespace ("" at cluster
// scope) and name.
type refKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

// usedRefs records the referenced objects the roots' scrapes looked up.
type usedRefs map[refKey]bool

type recordingResolver struct {
	next      reconcile.StoreResolver
	namespace string
	used      usedRefs
}

func (u usedRefs) record(next reconcile.StoreResolver, namespace string) adapter.Resolver {
	return recordingResolver{next: next, namespace: namespace, used: u}
}

func (r recordingResolver) Resolve(ctx context.Context, ref adapter.Reference) (*unstructured.Unstructured, error) {
	obj, err := r.next.Resolve(ctx, ref)
	if err == nil {
		ns := r.namespace
		if e, ok := r.next.Registry.Referenced(ref.GroupKind()); ok && e.ClusterScoped {
			ns = ""
		}
		r.used[refKey{gk: ref.GroupKind(), namespace: ns, name: ref.Name}] = true
	}
	return obj, err
}

// referencedOnly presents an adapter's ScrapeReferenced as Scrape, so that
// a referenced object's document is built like a root's.
type referencedOnly struct {
	adapter.Adapter
	rs adapter.ReferencedScraper
}

func (r referencedOnly) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	return r.rs.ScrapeReferenced(ctx, obj)
}

// unusedReferences builds a document for every object of a referenced
// kind that no root looked up, when its adapter can read it on its own.
func unusedReferences(ctx context.Context, reg *graph.Registry, store graph.Store, used usedRefs, opts Options) ([]Root, error) {
	var out []Root
	for _, e := range reg.AllEntries() {
		if e.Role != adapter.RoleReferenced {
			continue
		}
		rs, ok := e.Adapter.(adapter.ReferencedScraper)
		if !ok {
			continue
		}
		objs, err := store.InNamespace(ctx, e, "")
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", e.Kind.String(), err)
		}
		for _, o := range objs {
			if opts.Namespace != nil && o.GetNamespace() != "" && !opts.Namespace(o.GetNamespace()) {
				continue
			}
			if used[refKey{gk: e.GroupKind(), namespace: o.GetNamespace(), name: o.GetName()}] {
				continue
			}
			u, err := asUnstructured(o)
			if err != nil {
				return nil, err
			}
			if t, err := watch.TransformTracked(u.DeepCopy()); err == nil {
				if tu, ok := t.(*unstructured.Unstructured); ok {
					u = tu
				}
			}
			entry := e
			entry.Adapter = referencedOnly{Adapter: e.Adapter, rs: rs}
			rep := reconcile.BuildReport(ctx, entry, u, graph.Descendants{}, opts.Tool, opts.MaxDocumentBytes)
			out = append(out, Root{Entry: e, Object: identity(u), Report: rep, AIBOMName: reconcile.AIBOMName(e.GroupKind(), u.GetName()), Unused: true})
		}
	}
	return out, nil
}
