// Package scan is the logic of the aibom command line: it loads workloads from
// manifests or from a read-only snapshot of a live cluster into an in-memory
// store, and computes for every root exactly the document the controller
// would write (graph.Walker, graph.Closure, reconcile.BuildReport), then prints
// them as a table, as JSON or into one file per root.
package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/core/watch"
)

// Root is one reported workload: a tracked object without a tracked owner,
// and what the controller would write for it.
type Root struct {
	Entry graph.Entry
	// Object is the root's identity: its apiVersion, kind and metadata. Its
	// spec is read for the report and not kept, so that the roots of a
	// large input do not hold a second copy of it.
	Object *unstructured.Unstructured
	// Descendants is what the root absorbs.
	Descendants graph.Descendants
	// Report is reconcile.BuildReport's result; Report.Status.Document is the
	// document.
	Report reconcile.Report
	// AIBOMName is the name of the AIBOM the controller would write.
	AIBOMName string
	// Unused marks an object of a referenced kind (a serving runtime, a
	// model catalogue entry) that no root of the input refers to: its
	// document says what it defines, and nothing runs it. The controller
	// writes no AIBOM for it.
	Unused bool
	// Generic marks a generic root: an object of a kind no adapter tracks
	// at the top of its ownership chain (a custom resource no adapter
	// declares, a Pod nobody controls), or such an owner as its children's
	// references name it, read by the generic scraper (see
	// reconcile.GenericRoots).
	Generic bool
}

// Document returns the root's document ("" when none could be built).
func (r Root) Document() string { return r.Report.Status.Document }

// Err returns why the root has no (complete) document, if it has none.
func (r Root) Err() error {
	switch {
	case r.Report.ScrapeErr != nil:
		return fmt.Errorf("scrape: %w", r.Report.ScrapeErr)
	case r.Report.BuildErr != nil:
		return fmt.Errorf("build: %w", r.Report.BuildErr)
	}
	return nil
}

// Digests counts the container components of the document and those of them
// whose digest is resolved (carry a hash).
func (r Root) Digests() (resolved, total int) {
	var bom struct {
		Components []struct {
			Type   string            `json:"type"`
			Hashes []json.RawMessage `json:"hashes"`
		} `json:"components"`
	}
	if json.Unmarshal([]byte(r.Document()), &bom) != nil {
		return 0, 0
	}
	for _, c := range bom.Components {
		if c.Type != "container" {
			continue
		}
		total++
		if len(c.Hashes) > 0 {
			resolved++
		}
	}
	return resolved, total
}

// Options tune Evaluate.
type Options struct {
	// Tool names the program in documents.
	Tool document.Tool
	// MaxDocumentBytes is the inline cap of a document; 0 means no cap.
	MaxDocumentBytes int
	// Namespace, when set, tells whether roots in a namespace are reported
	// (the opt-in filter); nil reports every namespace.
	Namespace func(namespace string) bool
	// Unused also reports the objects of referenced kinds no root refers
	// to, when their adapter can read them on their own
	// (adapter.ReferencedScraper); see Root.Unused.
	Unused bool
}

// Evaluate finds every root in store and builds its report, the way the
// reconciler does for each tracked workload: a tracked object whose upward
// walk finds a tracked owner is absorbed and not reported; any other one is
// a root, reported with the closure of its descendants. Roots are sorted by
// namespace, kind, group and name.
func Evaluate(ctx context.Context, reg *graph.Registry, store graph.Store, opts Options) ([]Root, error) {
	walker := graph.Walker{Registry: reg, Store: store}
	closure := graph.Closure{Registry: reg, Store: store}
	var roots []Root
	used := usedRefs{}
	for _, e := range reg.TrackedEntries() {
		// Listed for their metadata (the walk reads no more); a root alone
		// is read whole, so a large input is never decoded all at once.
		objs, err := graph.InNamespaceMetadata(ctx, store, e, "")
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", e.Kind.String(), err)
		}
		for _, o := range objs {
			if opts.Namespace != nil && !opts.Namespace(o.GetNamespace()) {
				continue
			}
			// Decided as the controller decides once a dangling owner
			// reference has outlived its grace: offline, no garbage
			// collector is about to act on it.
			if walk := walker.TrackedOwner(ctx, o).Settle(); walk.Owner != nil {
				continue
			}
			whole, err := store.Get(ctx, e, o.GetNamespace(), o.GetName())
			if err != nil {
				return nil, fmt.Errorf("get %s %s/%s: %w", e.Kind.String(), o.GetNamespace(), o.GetName(), err)
			}
			if whole.GetObjectKind().GroupVersionKind().Empty() {
				whole.GetObjectKind().SetGroupVersionKind(e.GVK())
			}
			u, err := asUnstructured(whole)
			if err != nil {
				return nil, err
			}
			desc, err := closure.Descendants(ctx, u)
			if err != nil {
				return nil, err
			}
			// The adapter sees the workload as the controller's cache holds
			// it (without status, managed fields or the last-applied
			// annotation), so both write the same document.
			if t, err := watch.TransformTracked(u.DeepCopy()); err == nil {
				if tu, ok := t.(*unstructured.Unstructured); ok {
					u = tu
				}
			}
			// References resolve among the input objects, in the root's
			// namespace (or at cluster scope), as in the controller.
			rctx := adapter.WithResolver(ctx, used.record(reconcile.StoreResolver{Registry: reg, Store: store, Namespace: u.GetNamespace()}, u.GetNamespace()))
			rep := reconcile.BuildRootReport(rctx, reg, store, e, u, desc, opts.Tool, opts.MaxDocumentBytes, false, false)
			roots = append(roots, Root{Entry: e, Object: identity(u), Descendants: desc, Report: rep, AIBOMName: reconcile.AIBOMName(e.GroupKind(), u.GetName())})
		}
	}
	// Generic roots: what no tracked root reports (an owner no adapter
	// declares, a Pod nothing controls), as the controller decides them.
	generics, err := reconcile.GenericRoots(ctx, reg, store, opts.Namespace)
	if err != nil {
		return nil, err
	}
	for _, g := range generics {
		u := g.Object
		if g.Object.GetKind() == "Pod" {
			u = g.Object.DeepCopy() // scraped with its spec, as the pod cache keeps it
		}
		rep := reconcile.BuildRootReport(ctx, reg, store, g.Entry, u, g.Descendants, opts.Tool, opts.MaxDocumentBytes, true, g.Unread)
		roots = append(roots, Root{Entry: g.Entry, Object: identity(u), Descendants: g.Descendants, Report: rep, AIBOMName: reconcile.AIBOMName(g.Entry.GroupKind(), u.GetName()), Generic: true})
	}
	if opts.Unused {
		unused, err := unusedReferences(ctx, reg, store, used, opts)
		if err != nil {
			return nil, err
		}
		roots = append(roots, unused...)
	}
	sort.SliceStable(roots, func(i, j int) bool {
		a, b := roots[i], roots[j]
		switch {
		case a.Object.GetNamespace() != b.Object.GetNamespace():
			return a.Object.GetNamespace() < b.Object.GetNamespace()
		case a.Entry.Kind.Kind != b.Entry.Kind.Kind:
			return a.Entry.Kind.Kind < b.Entry.Kind.Kind
		case a.Entry.Group != b.Entry.Group:
			return a.Entry.Group < b.Entry.Group
		}
		return a.Object.GetName() < b.Object.GetName()
	})
	return roots, nil
}

// identity is u's apiVersion, kind and metadata (shared with u).
func identity(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if v, ok := u.Object[k]; ok {
			out.Object[k] = v
		}
	}
	return out
}

func asUnstructured(o client.Object) (*unstructured.Unstructured, error) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetNamespace(), o.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
	return u, nil
}
