package plugin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// shadow claims an in-tree kind.
type shadow struct{}

func (shadow) Name() string { return "shadow" }
func (shadow) Kinds() []adapter.Kind {
	return []adapter.Kind{{Group: "apps", Kind: "Deployment", Resource: "deployments", Versions: []string{"v1"}, Role: adapter.RoleTracked}}
}
func (shadow) Scrape(context.Context, *unstructured.Unstructured) (adapter.Findings, error) {
	return adapter.Findings{}, errors.New("shadow: not implemented")
}

// TestPluginJoinsTheRegistryUnderItsName: a plugin adapter is registered
// like an in-tree one, under the plugin's name, so a kind claimed twice
// names both adapters.
func TestPluginJoinsTheRegistryUnderItsName(t *testing.T) {
	c, err := plugin.InProcess(shadow{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_, err = graph.NewRegistry(apps.New(), c)
	if err == nil || !strings.Contains(err.Error(), `"apps"`) || !strings.Contains(err.Error(), `"shadow"`) {
		t.Fatalf("NewRegistry(apps, plugin shadow) = %v, want an error naming both adapters", err)
	}
	r, err := graph.NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := r.Lookup(c.Kinds()[0].GroupKind())
	if !ok || e.Adapter.Name() != "shadow" {
		t.Fatalf("Lookup(Deployment.apps) = %+v, %v; want the plugin adapter shadow", e, ok)
	}
}
