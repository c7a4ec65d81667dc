package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// recipes tracks Servers that name a Recipe (a referenced kind) holding
// their model. defect selects one way of getting references wrong.
type recipes struct{ defect string }

func (recipes) Name() string { return "recipes" }

func (recipes) Kinds() []adapter.Kind {
	return []adapter.Kind{
		{Group: "example.aibom.dev", Kind: "Server", Resource: "servers", Versions: []string{"v1"}, Role: adapter.RoleTracked},
		{Group: "example.aibom.dev", Kind: "Recipe", Resource: "recipes", Versions: []string{"v1"}, Role: adapter.RoleReferenced},
	}
}

func (r recipes) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	f := adapter.Findings{Scrapers: []adapter.Scraper{{Name: "recipes", Version: "1", Method: "crd-spec"}}}
	if !adapter.Tracks(r.Kinds(), obj.GroupVersionKind()) {
		return f, fmt.Errorf("%s is not a tracked kind", obj.GroupVersionKind())
	}
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return f, fmt.Errorf("spec: expected object")
	}
	name, ok := spec["recipe"].(string)
	if !ok {
		return f, fmt.Errorf("spec.recipe: expected string")
	}
	if r.defect == "ignores" {
		return f, nil
	}
	ref := adapter.Reference{Group: "example.aibom.dev", Kind: "Recipe", Name: name, Locator: "spec.recipe"}
	recipe, err := adapter.Resolve(ctx, ref)
	if err != nil {
		switch r.defect {
		case "errors":
			return adapter.Findings{}, err
		case "silent":
			return f, nil
		}
		f.Models = append(f.Models, adapter.Model{Name: ref.String(), Confidence: adapter.Unresolved,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: ref.Locator}})
		return f, nil
	}
	rspec, _ := recipe.Object["spec"].(map[string]any)
	var model string
	if r.defect == "panics" {
		model = rspec["model"].(string)
	} else {
		model, _ = rspec["model"].(string)
	}
	if model != "" {
		f.Models = append(f.Models, adapter.Model{Name: model, Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: ref.FieldLocator("spec.model")}})
	}
	return f, nil
}

func recipeFixtures(t *testing.T) []conformance.Fixture {
	t.Helper()
	server := mustDecode("{apiVersion: example.aibom.dev/v1, kind: Server, metadata: {name: s, namespace: team-a}, spec: {recipe: llama}}")
	recipe := mustDecode("{apiVersion: example.aibom.dev/v1, kind: Recipe, metadata: {name: llama, namespace: team-a}, spec: {model: meta-llama/Llama-3.1-8B-Instruct}}")
	elsewhere := mustDecode("{apiVersion: example.aibom.dev/v1, kind: Recipe, metadata: {name: llama, namespace: team-b}, spec: {model: team-b/private}}")
	return []conformance.Fixture{{
		Name: "server", Object: server, References: []*unstructured.Unstructured{recipe, elsewhere},
		Expect: conformance.Expect{Models: []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-8B-Instruct")}},
	}}
}

func TestReferencesGoodAdapterPasses(t *testing.T) {
	rec := run(t, recipes{}, recipeFixtures(t))
	require.False(t, rec.Failed(), rec.Report())
	require.Contains(t, rec.Tests(), "References/server")
}

func TestReferencesDefects(t *testing.T) {
	for defect, phrases := range map[string][]string{
		"errors":  {"with its references not-found: Scrape failed", "never an error"},
		"silent":  {"no finding has confidence unresolved"},
		"ignores": {"never looked up its reference Recipe/llama"},
		"panics":  {"malformed references", "panicked"},
	} {
		t.Run(defect, func(t *testing.T) {
			rec := run(t, recipes{defect: defect}, recipeFixtures(t))
			require.True(t, rec.Failed(), "the suite passed an adapter that %s", defect)
			require.Contains(t, failedChecks(rec), conformance.CheckReferences)
			found := false
			for _, f := range rec.Failures() {
				ok := true
				for _, p := range phrases {
					ok = ok && strings.Contains(f.Message, p)
				}
				found = found || ok
			}
			require.True(t, found, "no failure says %q:\n%s", phrases, rec.Report())
		})
	}
}

// The suite's resolver reads a namespaced reference in the root's
// namespace only: team-b's Recipe of the same name is never the answer.
func TestObjectResolverIsBoundedToTheRootsNamespace(t *testing.T) {
	fx := recipeFixtures(t)[0]
	r := &conformance.ObjectResolver{Kinds: recipes{}.Kinds(), Namespace: "team-b", Objects: fx.References[:1]}
	_, err := r.Resolve(context.Background(), adapter.Reference{Group: "example.aibom.dev", Kind: "Recipe", Name: "llama"})
	require.Equal(t, adapter.ReasonNotFound, adapter.UnresolvedReason(err))
	r.Namespace = "team-a"
	got, err := r.Resolve(context.Background(), adapter.Reference{Group: "example.aibom.dev", Kind: "Recipe", Name: "llama"})
	require.NoError(t, err)
	require.Nil(t, got.Object["status"])
	require.Equal(t, "meta-llama/Llama-3.1-8B-Instruct", got.Object["spec"].(map[string]any)["model"])
}
