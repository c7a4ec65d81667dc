package adapterinfo

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// widgets declares what it is given.
type widgets struct {
	name  string
	kinds []adapter.Kind
}

func (w widgets) Name() string          { return w.name }
func (w widgets) Kinds() []adapter.Kind { return adapter.CloneKinds(w.kinds) }
func (w widgets) Scrape(context.Context, *unstructured.Unstructured) (adapter.Findings, error) {
	return adapter.Findings{}, nil
}

var widgetKinds = []adapter.Kind{
	{Group: "example.com", Kind: "Widget", Resource: "widgets", Versions: []string{"v1", "v1beta1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}},
	{Group: "example.com", Kind: "Catalog", Resource: "catalogs", Versions: []string{"v1"}, Role: adapter.RoleReferenced, ClusterScoped: true},
	// An old declaration of Pod: tolerated by the registry, not listed.
	{Kind: "Pod", Resource: "pods", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly},
}

func TestListShowsSourcesPathsKindsAndRoles(t *testing.T) {
	c, err := plugin.InProcess(widgets{name: "widgets", kinds: widgetKinds})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	loaded := append(InTree(apps.New(), batch.New()), Plugins(c)...)
	loaded = append(loaded, Loaded{Adapter: widgets{name: "gadgets", kinds: []adapter.Kind{
		{Group: "gadgets.example.com", Kind: "Gadget", Resource: "gadgets", Versions: []string{"v1"}, Role: adapter.RoleTracked}}},
		Source: SourceProfile, Path: "/etc/aibom/profiles/gadgets.yaml"})
	reg, err := Registry(loaded)
	require.NoError(t, err)
	l := List(reg, loaded)

	var names []string
	for _, a := range l.Adapters {
		names = append(names, a.Name+"/"+string(a.Source))
	}
	require.Equal(t, []string{"core/core", "apps/in-tree", "batch/in-tree", "widgets/plugin", "gadgets/profile"}, names)
	require.Equal(t, []Kind{{Kind: "Pod", Resource: "pods", Versions: []string{"v1"}, Role: "walk-only"}}, l.Adapters[0].Kinds)
	require.Equal(t, "in-process", l.Adapters[3].Path)
	require.Equal(t, []Kind{
		{Kind: "Widget.example.com", Group: "example.com", Resource: "widgets", Versions: []string{"v1", "v1beta1"}, Role: "tracked", PodOwners: []string{"ReplicaSet.apps"}},
		{Kind: "Catalog.example.com", Group: "example.com", Resource: "catalogs", Versions: []string{"v1"}, Role: "referenced", ClusterScoped: true},
	}, l.Adapters[3].Kinds, "the plugin's old Pod declaration is the core's")

	var text bytes.Buffer
	require.NoError(t, Write(&text, l, FormatText))
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	require.Regexp(t, `^ADAPTER\s+SOURCE\s+KIND\s+ROLE\s+VERSIONS\s+POD OWNERS\s+PATH$`, lines[0])
	require.Regexp(t, `^core\s+core\s+Pod\s+walk-only\s+v1\s+-\s+-$`, lines[1])
	require.Contains(t, text.String(), "Deployment.apps")
	require.Regexp(t, `(?m)^widgets\s+plugin\s+Widget\.example\.com\s+tracked\s+v1,v1beta1\s+ReplicaSet\.apps\s+in-process$`, text.String())
	require.Regexp(t, `(?m)^widgets\s+plugin\s+Catalog\.example\.com\s+referenced \(cluster\)\s+v1\s+-\s+in-process$`, text.String())
	require.Regexp(t, `(?m)^gadgets\s+profile\s+Gadget\.gadgets\.example\.com\s+tracked\s+v1\s+-\s+/etc/aibom/profiles/gadgets\.yaml$`, text.String())

	var js bytes.Buffer
	require.NoError(t, Write(&js, l, FormatJSON))
	var back Listing
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, l, back)
	require.Contains(t, js.String(), `"source": "plugin"`)

	require.ErrorContains(t, Write(&text, l, "yaml"), `unknown listing format "yaml"`)
}

// A listing is a dry run: what a start refuses, Registry refuses too.
func TestRegistryRefusesWhatAStartRefuses(t *testing.T) {
	_, err := Registry(append(InTree(apps.New()), Loaded{Adapter: apps.New(), Source: SourcePlugin, Path: "/plugins/apps"}))
	require.ErrorContains(t, err, `adapter "apps" enabled twice`)

	claimsDeployments := widgets{name: "deployments", kinds: []adapter.Kind{
		{Group: "apps", Kind: "Deployment", Resource: "deployments", Versions: []string{"v1"}, Role: adapter.RoleTracked}}}
	_, err = Registry(append(InTree(apps.New()), Loaded{Adapter: claimsDeployments, Source: SourcePlugin, Path: "/plugins/d"}))
	require.ErrorContains(t, err, `kind Deployment.apps is claimed by both adapter "apps" (tracked) and adapter "deployments" (tracked)`)
}
