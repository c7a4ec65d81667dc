// Package apps is the adapter for the built-in apps/v1 workloads:
// Deployment, StatefulSet and DaemonSet are tracked; ReplicaSet is the
// walk-only intermediate that connects a Deployment to its pods. Pod itself
// is the core's kind (graph.PodGroupKind), registered whatever adapters are
// enabled.
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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Name is the adapter's name, as used by the --adapters flag.
const Name = "apps"

// PropertyReplicas is the property holding spec.replicas.
const PropertyReplicas = "k8s.replicas"

var kinds = []adapter.Kind{
	// A Deployment runs its pods through ReplicaSets; a StatefulSet and a
	// DaemonSet control theirs directly.
	{Group: "apps", Kind: "Deployment", Resource: "deployments", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}},
	{Group: "apps", Kind: "StatefulSet", Resource: "statefulsets", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "apps", Kind: "StatefulSet"}}},
	{Group: "apps", Kind: "DaemonSet", Resource: "daemonsets", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "apps", Kind: "DaemonSet"}}},
	{Group: "apps", Kind: "ReplicaSet", Resource: "replicasets", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly},
}

type appsAdapter struct{}

// New returns the apps adapter.
func New() adapter.Adapter { return appsAdapter{} }

func (appsAdapter) Name() string { return Name }

func (appsAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (appsAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("apps: no object")
	}
	gvk := obj.GroupVersionKind()
	if !adapter.Tracks(kinds, gvk) {
		return adapter.Findings{}, fmt.Errorf("apps: %s is not a tracked kind of this adapter", gvk)
	}
	spec, err := fields.Object(obj.Object, "spec", "")
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("apps: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	template, err := fields.Object(spec, "template", "spec")
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("apps: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	opts := podtemplate.Options{WorkloadAnnotations: obj.GetAnnotations()}
	if gvk.Kind == "StatefulSet" {
		opts.VolumeClaimTemplates = podtemplate.ClaimTemplateNames(spec)
	}
	f, err := podtemplate.ScrapeTemplate(template, "spec.template", opts)
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("apps: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	if r, ok := spec["replicas"]; ok {
		if n, ok := fields.Integer(r); ok {
			f.Properties = append(f.Properties, adapter.Property{Name: PropertyReplicas, Value: strconv.FormatInt(n, 10)})
		}
	}
	return f, nil
}
