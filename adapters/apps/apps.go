// Package apps is the adapter for the built-in apps/v1 workloads:
// Deployment, StatefulSet and DaemonSet are tracked; ReplicaSet and Pod are
// walk-only intermediates that connect a Deployment to its pods.
//
// Scrape reads spec.template with the podtemplate scraper, passing the
// object's annotations as workload annotations, and records spec.replicas
// as the property "k8s.replicas" when it is set.
package apps

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Name is the adapter's name, as used by the --adapters flag.
const Name = "apps"

// PropertyReplicas is the property holding spec.replicas.
const PropertyReplicas = "k8s.replicas"

var kinds = []adapter.Kind{
	{Group: "apps", Kind: "Deployment", Resource: "deployments", Versions: []string{"v1"}, Role: adapter.RoleTracked},
	{Group: "apps", Kind: "StatefulSet", Resource: "statefulsets", Versions: []string{"v1"}, Role: adapter.RoleTracked},
	{Group: "apps", Kind: "DaemonSet", Resource: "daemonsets", Versions: []string{"v1"}, Role: adapter.RoleTracked},
	{Group: "apps", Kind: "ReplicaSet", Resource: "replicasets", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly},
	{Group: "", Kind: "Pod", Resource: "pods", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly},
}

type appsAdapter struct{}

// New returns the apps adapter.
func New() adapter.Adapter { return appsAdapter{} }

func (appsAdapter) Name() string { return Name }

func (appsAdapter) Kinds() []adapter.Kind {
	out := make([]adapter.Kind, len(kinds))
	for i, k := range kinds {
		k.Versions = append([]string(nil), k.Versions...)
		out[i] = k
	}
	return out
}

func (appsAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("apps: no object")
	}
	gvk := obj.GroupVersionKind()
	if !tracked(gvk.Group, gvk.Kind, gvk.Version) {
		return adapter.Findings{}, fmt.Errorf("apps: %s is not a tracked kind of this adapter", gvk)
	}
	spec, err := mapAt(obj.Object, "spec", "")
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("apps: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	template, err := mapAt(spec, "template", "spec")
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("apps: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	opts := podtemplate.Options{WorkloadAnnotations: obj.GetAnnotations()}
	if gvk.Kind == "StatefulSet" {
		opts.VolumeClaimTemplates = claimTemplateNames(spec)
	}
	f, err := podtemplate.ScrapeTemplate(template, "spec.template", opts)
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("apps: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	if r, ok := spec["replicas"]; ok {
		if n, ok := integer(r); ok {
			f.Properties = append(f.Properties, adapter.Property{Name: PropertyReplicas, Value: strconv.FormatInt(n, 10)})
		}
	}
	return f, nil
}

func tracked(group, kind, version string) bool {
	for _, k := range kinds {
		if k.Role != adapter.RoleTracked || k.Group != group || k.Kind != kind {
			continue
		}
		for _, v := range k.Versions {
			if v == version {
				return true
			}
		}
	}
	return false
}

// mapAt returns m[key] as an object; absent or null is nil. path is m's
// locator, for errors.
func mapAt(m map[string]any, key, path string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	out, ok := v.(map[string]any)
	if !ok {
		if path != "" {
			key = path + "." + key
		}
		return nil, fmt.Errorf("%s: expected object, got %T", key, v)
	}
	return out, nil
}

// integer reads a JSON number that holds an integer.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

// claimTemplateNames lists spec.volumeClaimTemplates[*].metadata.name,
// skipping malformed entries.
func claimTemplateNames(spec map[string]any) []string {
	list, _ := spec["volumeClaimTemplates"].([]any)
	var names []string
	for _, el := range list {
		m, _ := el.(map[string]any)
		meta, _ := m["metadata"].(map[string]any)
		if n, _ := meta["name"].(string); n != "" {
			names = append(names, n)
		}
	}
	return names
}
