package plugin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// chained looks up a Widget's Template, then the Base the Template names: a
// second lookup that depends on the first one's answer.
type chained struct{}

func (chained) Name() string { return "chained" }

func (chained) Kinds() []adapter.Kind {
	return []adapter.Kind{
		{Group: "example.com", Kind: "Widget", Resource: "widgets", Versions: []string{"v1"}, Role: adapter.RoleTracked},
		{Group: "example.com", Kind: "Template", Resource: "templates", Versions: []string{"v1"}, Role: adapter.RoleReferenced},
		{Group: "example.com", Kind: "Base", Resource: "bases", Versions: []string{"v1"}, Role: adapter.RoleReferenced, ClusterScoped: true},
	}
}

func (chained) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	f := adapter.Findings{Scrapers: []adapter.Scraper{{Name: "chained", Version: "1", Method: "crd-spec"}}}
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "template")
	tmpl, err := adapter.Resolve(ctx, adapter.Reference{Group: "example.com", Kind: "Template", Name: name, Locator: "spec.template"})
	if err != nil {
		f.Models = append(f.Models, adapter.Model{Name: "Template/" + name, Confidence: adapter.Unresolved,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.template"}})
		return f, nil
	}
	base, _, _ := unstructured.NestedString(tmpl.Object, "spec", "base")
	b, err := adapter.Resolve(ctx, adapter.Reference{Group: "example.com", Kind: "Base", Name: base, Locator: "Template/" + name + ":spec.base"})
	if err != nil {
		return f, nil
	}
	model, _, _ := unstructured.NestedString(b.Object, "spec", "model")
	f.Models = append(f.Models, adapter.Model{Name: model, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "Base/" + base + ":spec.model"}})
	return f, nil
}

func obj(apiVersion, kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

// The host resolves on the plugin's behalf, round after round, within the
// root's namespace; the plugin never reads the cluster.
func TestReferencesOverTheWire(t *testing.T) {
	c, err := plugin.InProcess(chained{})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	widget := obj("example.com/v1", "Widget", "team-a", "w", map[string]any{"template": "t"})
	objects := []*unstructured.Unstructured{
		obj("example.com/v1", "Template", "team-a", "t", map[string]any{"base": "b"}),
		obj("example.com/v1", "Base", "", "b", map[string]any{"model": "org/model-7b"}),
	}
	r := &conformance.ObjectResolver{Kinds: chained{}.Kinds(), Namespace: "team-a", Objects: objects}
	f, err := c.Scrape(adapter.WithResolver(context.Background(), r), widget)
	require.NoError(t, err)
	require.Equal(t, []adapter.Model{{Name: "org/model-7b", Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "Base/b:spec.model"}}}, f.Models)
	require.Len(t, r.Lookups(), 2, "each reference is resolved once by the host")

	// The same Template in another namespace is not the Widget's.
	r = &conformance.ObjectResolver{Kinds: chained{}.Kinds(), Namespace: "team-b", Objects: objects}
	f, err = c.Scrape(adapter.WithResolver(context.Background(), r), widget)
	require.NoError(t, err)
	require.Equal(t, adapter.Unresolved, f.Models[0].Confidence)

	// A host that offers no resolver: every lookup is unavailable, the
	// scrape still answers.
	f, err = c.Scrape(context.Background(), widget)
	require.NoError(t, err)
	require.Equal(t, "Template/t", f.Models[0].Name)
	require.Equal(t, adapter.Unresolved, f.Models[0].Confidence)
}
