package reconcile

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// modelAdapter tracks Widgets and reads their model from the Recipe (a
// namespaced referenced kind) or the Catalog (cluster-scoped) they name.
type modelAdapter struct{ lookups []string }

var (
	recipeGK  = schema.GroupKind{Group: "example.com", Kind: "Recipe"}
	catalogGK = schema.GroupKind{Group: "example.com", Kind: "Catalog"}
)

func (*modelAdapter) Name() string { return "recipes" }
func (*modelAdapter) Kinds() []adapter.Kind {
	return []adapter.Kind{coretest.Kind("example.com", "Widget", "widgets", "v1", adapter.RoleTracked), coretest.Kind("example.com", "Recipe", "recipes", "v1", adapter.RoleReferenced), {Group: "example.com", Kind: "Catalog", Resource: "catalogs", Versions: []string{"v1"}, Role: adapter.RoleReferenced, ClusterScoped: true}}
}

func (a *modelAdapter) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	f := adapter.Findings{Scrapers: []adapter.Scraper{{Name: "recipes", Version: "1", Method: "crd-spec"}}}
	for _, k := range []string{"Recipe", "Catalog", "Vault"} {
		name, _, _ := unstructured.NestedString(obj.Object, "spec", strings.ToLower(k))
		if name == "" {
			continue
		}
		ref := adapter.Reference{Group: "example.com", Kind: k, Name: name, Locator: "spec." + strings.ToLower(k)}
		if k == "Vault" {
			ref.Group = "other.io"
		}
		a.lookups = append(a.lookups, ref.String())
		r, err := adapter.Resolve(ctx, ref)
		if err != nil {
			f.Models = append(f.Models, adapter.Model{Name: ref.String(), Confidence: adapter.Unresolved,
				Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: ref.Locator}})
			continue
		}
		model, _, _ := unstructured.NestedString(r.Object, "spec", "model")
		f.Models = append(f.Models, adapter.Model{Name: model, Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: ref.FieldLocator("spec.model")}})
	}
	return f, nil
}

func refObj(gk schema.GroupKind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": map[string]any{"phase": "Ready"}}}
	u.SetGroupVersionKind(gk.WithVersion("v1"))
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetUID(types.UID("uid-" + namespace + "-" + name))
	return u
}

func widget(namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := refObj(coretest.WidgetGVK.GroupKind(), namespace, name, spec)
	delete(u.Object, "status")
	return u
}

func referenceWorld(t *testing.T, objs ...client.Object) (*graph.Registry, *modelAdapter, graph.Store) {
	t.Helper()
	a := &modelAdapter{}
	reg, err := graph.NewRegistry(a)
	require.NoError(t, err)
	return reg, a, graph.NewMemoryStore(objs)
}

// gather scrapes a Widget as the reconciler does: references resolve from
// the store, in the Widget's namespace.
func gather(reg *graph.Registry, store graph.Store, w *unstructured.Unstructured) Inputs {
	e, _ := reg.Lookup(coretest.WidgetGVK.GroupKind())
	ctx := adapter.WithResolver(context.Background(), StoreResolver{Registry: reg, Store: store, Namespace: w.GetNamespace()})
	return GatherInputs(ctx, e, w, graph.Descendants{}, document.Tool{Name: "aibom", Version: "test"}, 0)
}

func TestRegistryKeepsReferencedKindsOutOfTheOwnershipGraph(t *testing.T) {
	reg, _, _ := referenceWorld(t)
	_, ok := reg.Lookup(recipeGK)
	require.False(t, ok, "the walk and the closure never see a referenced kind")
	for _, e := range reg.Entries() {
		require.NotEqual(t, adapter.RoleReferenced, e.Role)
	}
	e, ok := reg.Referenced(catalogGK)
	require.True(t, ok)
	require.True(t, e.ClusterScoped)
	require.Len(t, reg.ReferencedEntries(), 2)
	require.Len(t, reg.AllEntries(), 4, "the supervisor watches every kind: the adapter's three and the core's Pod")
}

func TestReferenceResolvedRecordedAndHashed(t *testing.T) {
	w := widget("team-a", "w", map[string]any{"recipe": "r", "catalog": "c"})
	recipe := refObj(recipeGK, "team-a", "r", map[string]any{"model": "org/model-a"})
	catalog := refObj(catalogGK, "", "c", map[string]any{"model": "org/model-c"})
	reg, _, store := referenceWorld(t, w, recipe, catalog)

	in := gather(reg, store, w)
	require.NoError(t, in.ScrapeErr)
	require.Equal(t, []string{"org/model-a", "org/model-c"}, []string{in.Findings.Models[0].Name, in.Findings.Models[1].Name})
	require.Equal(t, []document.Reference{
		{Group: "example.com", Kind: "Catalog", Name: "c", Locator: "spec.catalog"},
		{Group: "example.com", Kind: "Recipe", Namespace: "team-a", Name: "r", Locator: "spec.recipe"},
	}, in.References)

	// The document lists each reference with the field that named it.
	res, err := document.Build(in.Input)
	require.NoError(t, err)
	doc := string(res.JSON)
	for _, want := range []string{`"aibom.reference.0"`, `"Catalog/c"`, `"Recipe/r"`, `"spec.recipe"`, `"resolved"`, `"Recipe/r:spec.model"`} {
		require.Contains(t, doc, want)
	}

	// A change outside the referenced object's spec (its status) changes
	// nothing; a change of its spec changes the hash.
	recipe2 := recipe.DeepCopy()
	recipe2.Object["status"] = map[string]any{"phase": "Syncing"}
	_, _, store2 := referenceWorld(t, w, recipe2, catalog)
	require.Equal(t, in.Hash, gather(reg, store2, w).Hash)
	recipe3 := recipe.DeepCopy()
	recipe3.Object["spec"] = map[string]any{"model": "org/model-b"}
	_, _, store3 := referenceWorld(t, w, recipe3, catalog)
	require.NotEqual(t, in.Hash, gather(reg, store3, w).Hash)
}

// A tenant cannot make its root read another namespace's object, nor an
// object of a kind its adapter did not declare as referenced.
func TestReferenceBoundedToTheRootsNamespaceAndDeclaredKinds(t *testing.T) {
	w := widget("team-a", "w", map[string]any{"recipe": "secret-recipe", "vault": "v"})
	other := refObj(recipeGK, "team-b", "secret-recipe", map[string]any{"model": "team-b/private"})
	vault := refObj(coretest.SecretGVK.GroupKind(), "team-a", "v", map[string]any{"model": "x"})
	reg, _, store := referenceWorld(t, w, other, vault)
	in := gather(reg, store, w)
	require.NoError(t, in.ScrapeErr)
	for _, m := range in.Findings.Models {
		require.Equal(t, adapter.Unresolved, m.Confidence, m.Name)
		require.NotEqual(t, "team-b/private", m.Name)
	}
	require.Equal(t, []document.Reference{
		{Group: "example.com", Kind: "Recipe", Namespace: "team-a", Name: "secret-recipe", Locator: "spec.recipe", Unresolved: adapter.ReasonNotFound},
		{Group: "other.io", Kind: "Vault", Namespace: "team-a", Name: "v", Locator: "spec.vault", Unresolved: adapter.ReasonUndeclared},
	}, in.References)
	res, err := document.Build(in.Input)
	require.NoError(t, err)
	require.Contains(t, string(res.JSON), `"unresolved:not-found"`)
}

// A root without references hashes and encodes as before references
// existed: no reference property, no hash change.
func TestNoReferencesNoChange(t *testing.T) {
	w := widget("team-a", "w", map[string]any{})
	reg, _, store := referenceWorld(t, w)
	in := gather(reg, store, w)
	require.Empty(t, in.References)
	// The hashed input has no References field at all (omitempty): the
	// hashes of existing roots do not change with the upgrade.
	b, err := json.Marshal(in.Input)
	require.NoError(t, err)
	require.NotContains(t, string(b), "References")
	res, err := document.Build(in.Input)
	require.NoError(t, err)
	require.NotContains(t, string(res.JSON), "aibom.reference")
}

// A token written where a name belongs reaches the document masked; the
// index keeps the name as written.
func TestReferenceNamesRedactedInTheDocument(t *testing.T) {
	const token = "hf_abcdefghijklmnopqrstuvwxyz0123456789"
	w := widget("team-a", "w", map[string]any{"recipe": token})
	reg, _, store := referenceWorld(t, w)
	in := gather(reg, store, w)
	require.Equal(t, token, in.Referenced[0].Name)
	require.NotContains(t, in.References[0].Name, token)
	res, err := document.Build(in.Input)
	require.NoError(t, err)
	require.NotContains(t, string(res.JSON), token)
}

func TestReferenceReason(t *testing.T) {
	gr := schema.GroupResource{Group: "example.com", Resource: "recipes"}
	require.Equal(t, adapter.ReasonNotFound, ReferenceReason(apierrors.NewNotFound(gr, "r")))
	require.Equal(t, adapter.ReasonForbidden, ReferenceReason(apierrors.NewForbidden(gr, "r", nil)))
	require.Equal(t, adapter.ReasonNotServed, ReferenceReason(graph.ErrKindNotReady))
}

func TestReferenceIndex(t *testing.T) {
	x := NewReferenceIndex()
	a := Request{GroupKind: coretest.WidgetGVK.GroupKind(), Namespace: "team-a", Name: "a"}
	b := Request{GroupKind: coretest.WidgetGVK.GroupKind(), Namespace: "team-b", Name: "b"}
	x.Set(a, []document.Reference{{Group: "example.com", Kind: "Recipe", Namespace: "team-a", Name: "r"}, {Group: "example.com", Kind: "Catalog", Name: "c"}})
	x.Set(b, []document.Reference{{Group: "example.com", Kind: "Catalog", Name: "c"}})
	require.Equal(t, []Request{a}, x.Roots(recipeGK, "team-a", "r"))
	require.Empty(t, x.Roots(recipeGK, "team-b", "r"), "namespaced references are per namespace")
	require.Equal(t, []Request{a, b}, x.Roots(catalogGK, "", "c"), "a cluster-scoped object reaches the roots of every namespace")

	// The latest reconcile replaces a root's references.
	x.Set(a, []document.Reference{{Group: "example.com", Kind: "Recipe", Namespace: "team-a", Name: "r2"}})
	require.Empty(t, x.Roots(recipeGK, "team-a", "r"))
	require.Equal(t, []Request{b}, x.Roots(catalogGK, "", "c"))
	x.Forget(b)
	require.Empty(t, x.Roots(catalogGK, "", "c"))
	require.Equal(t, 1, x.Len())

	var nilIndex *ReferenceIndex
	nilIndex.Set(a, nil)
	require.Empty(t, nilIndex.Roots(recipeGK, "team-a", "r"))
}

// An event on a referenced object enqueues exactly the roots that used it.
func TestReferenceEventEnqueuesReferrers(t *testing.T) {
	reg, _, store := referenceWorld(t)
	x := NewReferenceIndex()
	a := Request{GroupKind: coretest.WidgetGVK.GroupKind(), Namespace: "team-a", Name: "a"}
	x.Set(a, []document.Reference{{Group: "example.com", Kind: "Catalog", Name: "c"}})
	m := EventMapper{Registry: reg, Store: store, References: x}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[Request]())
	defer q.ShutDown()
	drain := func() []Request {
		var out []Request
		for q.Len() > 0 {
			r, _ := q.Get()
			q.Done(r)
			q.Forget(r)
			out = append(out, r)
		}
		return out
	}
	e, _ := reg.Referenced(catalogGK)
	old := refObj(catalogGK, "", "c", map[string]any{"model": "m1"})
	old.SetGeneration(1)
	changed := refObj(catalogGK, "", "c", map[string]any{"model": "m2"})
	changed.SetGeneration(2)
	m.OnUpdate(context.Background(), e, old, changed, q)
	require.Equal(t, []Request{a}, drain())
	statusOnly := old.DeepCopy()
	m.OnUpdate(context.Background(), e, old, statusOnly, q)
	require.Empty(t, drain(), "a status change does not concern the roots")
	m.OnDelete(context.Background(), e, old, q)
	require.Equal(t, []Request{a}, drain())
}
