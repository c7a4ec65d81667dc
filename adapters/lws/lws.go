// Package lws is the adapter for the kubernetes-sigs/lws kinds:
// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) and DisaggregatedSet
// (disaggregatedset.x-k8s.io/v1), both tracked. A DisaggregatedSet controls
// the LeaderWorkerSets it creates, so its document absorbs them.
//
// # LeaderWorkerSet
//
// Scrape reads spec.leaderWorkerTemplate.leaderTemplate (optional) and
// spec.leaderWorkerTemplate.workerTemplate with the podtemplate scraper. When
// a leader template is present its containers get the group "leader" and the
// worker template's the group "worker". When it is absent the leader pods run
// the worker template: the worker template is scraped once, with the group
// "worker" (its containers are not counted twice), and the property
// lws.leaderTemplate says "worker-template". The names of
// spec.leaderWorkerTemplate.volumeClaimTemplates are passed to the pod
// template scraper, so a claim mounted at a model path is reported as a pvc.
//
// Properties, each only when set: lws.replicas (groups), lws.size (pods per
// group, leader included), lws.startupPolicy, lws.restartPolicy, and
// lws.leaderTemplate ("leader-template" or "worker-template") whenever
// spec.leaderWorkerTemplate is present.
//
// # DisaggregatedSet
//
// Scrape reads every spec.roles[i] into one set of findings. A role carries
// an LWS template: in the v1 shape under spec.roles[i].spec
// (LeaderWorkerSetTemplateSpec: metadata + spec), in the earlier alpha shape
// inlined in the role (spec.roles[i].replicas,
// spec.roles[i].leaderWorkerTemplate). Both are read; locators follow the
// shape found. Containers of a role that has only a worker template get the
// role name as group; a role with a leader template gives "<role>/leader" and
// "<role>/worker". Model annotations in spec.roles[i].metadata.annotations
// (propagated by the controller to the role's LeaderWorkerSet) are declared
// models, like workload annotations.
//
// Properties: disaggregatedset.slices when set, and per role i
// disaggregatedset.role.<i>.name, then, when set, .replicas, .size,
// .startupPolicy, .restartPolicy, .leaderTemplate and .scaling (the
// scaling mode).
//
// # Malformed input
//
// An absent or null object on the path to a template is skipped; a field on
// that path of the wrong type is an error naming its locator, as is a role
// that is not an object or has no name. Scalars recorded as properties that
// have the wrong type are skipped. String values recorded as properties go
// through podtemplate.Redact.
package lws

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
const Name = "lws"

// API groups of the kinds this adapter knows.
const (
	GroupLeaderWorkerSet  = "leaderworkerset.x-k8s.io"
	GroupDisaggregatedSet = "disaggregatedset.x-k8s.io"
)

// Scraper identity recorded in adapter.Findings.Scrapers, before the
// podtemplate scraper's.
const (
	ScraperName    = "lws"
	ScraperVersion = "0.1.0"
	ScraperMethod  = "crd-spec"
)

// Scraper returns the entry Scrape puts first in adapter.Findings.Scrapers.
func Scraper() adapter.Scraper {
	return adapter.Scraper{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}
}

// Properties recorded for a LeaderWorkerSet.
const (
	// PropertyReplicas holds spec.replicas: the number of groups.
	PropertyReplicas = "lws.replicas"
	// PropertySize holds spec.leaderWorkerTemplate.size: pods per group,
	// leader included.
	PropertySize = "lws.size"
	// PropertyStartupPolicy holds spec.startupPolicy.
	PropertyStartupPolicy = "lws.startupPolicy"
	// PropertyRestartPolicy holds spec.leaderWorkerTemplate.restartPolicy.
	PropertyRestartPolicy = "lws.restartPolicy"
	// PropertyLeaderTemplate says which template the leader pods run:
	// LeaderTemplateOwn or LeaderTemplateWorker.
	PropertyLeaderTemplate = "lws.leaderTemplate"
)

// Values of PropertyLeaderTemplate.
const (
	// LeaderTemplateOwn: spec.leaderWorkerTemplate.leaderTemplate is set.
	LeaderTemplateOwn = "leader-template"
	// LeaderTemplateWorker: no leader template; leaders run the worker
	// template.
	LeaderTemplateWorker = "worker-template"
)

// Properties recorded for a DisaggregatedSet.
const (
	// PropertySlices holds spec.slices.
	PropertySlices = "disaggregatedset.slices"
	// PropertyRolePrefix starts every per-role property:
	// "disaggregatedset.role.<i>.name", ".replicas", ".size",
	// ".startupPolicy", ".restartPolicy", ".leaderTemplate", ".scaling".
	PropertyRolePrefix = "disaggregatedset.role."
)

// Container groups of a LeaderWorkerSet.
const (
	GroupLeader = "leader"
	GroupWorker = "worker"
)

// statefulSet is apps/v1 StatefulSet, the controller of every LWS pod.
var statefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}

var kinds = []adapter.Kind{
	// Leader and worker pods are controlled by StatefulSets (the leaders'
	// by the LWS's, the workers' by one per group, under the leader pod).
	{Group: GroupLeaderWorkerSet, Kind: "LeaderWorkerSet", Resource: "leaderworkersets", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{statefulSet}},
	{Group: GroupDisaggregatedSet, Kind: "DisaggregatedSet", Resource: "disaggregatedsets", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{statefulSet}},
}

type lwsAdapter struct{}

// New returns the lws adapter.
func New() adapter.Adapter { return lwsAdapter{} }

func (lwsAdapter) Name() string { return Name }

func (lwsAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (lwsAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("lws: no object")
	}
	gvk := obj.GroupVersionKind()
	if !adapter.Tracks(kinds, gvk) {
		return adapter.Findings{}, fmt.Errorf("lws: %s is not a tracked kind of this adapter", gvk)
	}
	f := adapter.Findings{Scrapers: []adapter.Scraper{Scraper()}}
	models, reds := podtemplate.ModelsFromAnnotations(obj.GetAnnotations(), "metadata.annotations", adapter.SourceWorkloadAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)
	var err error
	if gvk.Kind == "LeaderWorkerSet" {
		err = scrapeLeaderWorkerSet(obj.Object, &f)
	} else {
		err = scrapeDisaggregatedSet(obj.Object, &f)
	}
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("lws: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return f, nil
}

func scrapeLeaderWorkerSet(obj map[string]any, f *adapter.Findings) error {
	spec, err := fields.Object(obj, "spec", "")
	if err != nil {
		return err
	}
	return scrapeLWSSpec(spec, "spec", groups{leader: GroupLeader, worker: GroupWorker, workerOnly: GroupWorker}, "lws.", f)
}

func scrapeDisaggregatedSet(obj map[string]any, f *adapter.Findings) error {
	spec, err := fields.Object(obj, "spec", "")
	if err != nil {
		return err
	}
	if n, ok := fields.Integer(spec["slices"]); ok {
		f.Properties = append(f.Properties, adapter.Property{Name: PropertySlices, Value: strconv.FormatInt(n, 10)})
	}
	roles, err := fields.List(spec, "roles", "spec")
	if err != nil {
		return err
	}
	for i, raw := range roles {
		path := fmt.Sprintf("spec.roles[%d]", i)
		role, ok := raw.(map[string]any)
		if !ok {
			return fields.TypeError(path, "object", raw)
		}
		name, ok := role["name"].(string)
		if !ok || name == "" {
			return fmt.Errorf("%s.name: expected a role name, got %s", path, fields.Describe(role["name"]))
		}
		prefix := fmt.Sprintf("%s%d.", PropertyRolePrefix, i)
		addString(f, prefix+"name", name, path+".name")

		// v1: the LWS template (metadata + spec) is inlined in the role; an
		// earlier alpha inlined the LWS spec itself.
		lwsSpec, lwsPath := role, path
		roleSpec, err := fields.Object(role, "spec", path)
		if err != nil {
			return err
		}
		if roleSpec != nil {
			lwsSpec, lwsPath = roleSpec, path+".spec"
		}
		if err := roleAnnotationModels(role, path, f); err != nil {
			return err
		}
		g := groups{leader: name + "/" + GroupLeader, worker: name + "/" + GroupWorker, workerOnly: name}
		if err := scrapeLWSSpec(lwsSpec, lwsPath, g, prefix, f); err != nil {
			return err
		}
		if scaling, ok := role["scaling"].(map[string]any); ok {
			addString(f, prefix+"scaling", scaling["mode"], path+".scaling.mode")
		}
	}
	return nil
}

// groups names the container groups of one LWS spec: leader and worker when
// a leader template is present, workerOnly for the worker template when it
// is not.
type groups struct{ leader, worker, workerOnly string }

// scrapeLWSSpec reads a LeaderWorkerSetSpec found at path, adding its
// containers, models, data and properties (prefixed by propPrefix) to f.
func scrapeLWSSpec(spec map[string]any, path string, g groups, propPrefix string, f *adapter.Findings) error {
	lwtPath := path + ".leaderWorkerTemplate"
	lwt, err := fields.Object(spec, "leaderWorkerTemplate", path)
	if err != nil {
		return err
	}
	leader, err := fields.Object(lwt, "leaderTemplate", lwtPath)
	if err != nil {
		return err
	}
	worker, err := fields.Object(lwt, "workerTemplate", lwtPath)
	if err != nil {
		return err
	}
	claims := podtemplate.ClaimTemplateNames(lwt)
	workerGroup := g.workerOnly
	if leader != nil {
		workerGroup = g.worker
		lf, err := podtemplate.ScrapeTemplate(leader, lwtPath+".leaderTemplate",
			podtemplate.Options{Group: g.leader, VolumeClaimTemplates: claims})
		if err != nil {
			return err
		}
		podtemplate.MergeFindings(f, lf)
	}
	if worker != nil {
		wf, err := podtemplate.ScrapeTemplate(worker, lwtPath+".workerTemplate",
			podtemplate.Options{Group: workerGroup, VolumeClaimTemplates: claims})
		if err != nil {
			return err
		}
		podtemplate.MergeFindings(f, wf)
	}

	if n, ok := fields.Integer(spec["replicas"]); ok {
		f.Properties = append(f.Properties, adapter.Property{Name: propPrefix + "replicas", Value: strconv.FormatInt(n, 10)})
	}
	if n, ok := fields.Integer(lwt["size"]); ok {
		f.Properties = append(f.Properties, adapter.Property{Name: propPrefix + "size", Value: strconv.FormatInt(n, 10)})
	}
	addString(f, propPrefix+"startupPolicy", spec["startupPolicy"], path+".startupPolicy")
	addString(f, propPrefix+"restartPolicy", lwt["restartPolicy"], lwtPath+".restartPolicy")
	if lwt != nil {
		v := LeaderTemplateWorker
		if leader != nil {
			v = LeaderTemplateOwn
		}
		f.Properties = append(f.Properties, adapter.Property{Name: propPrefix + "leaderTemplate", Value: v})
	}
	return nil
}

// roleAnnotationModels adds the models declared by the model annotations of
// a role's metadata (role located at path). Only annotations with
// podtemplate.ModelAnnotationPrefix are checked.
func roleAnnotationModels(role map[string]any, path string, f *adapter.Findings) error {
	metaPath := path + ".metadata"
	meta, err := fields.Object(role, "metadata", path)
	if err != nil || meta == nil {
		return err
	}
	ann, err := podtemplate.ModelAnnotations(meta, metaPath)
	if err != nil || ann == nil {
		return err
	}
	models, reds := podtemplate.ModelsFromAnnotations(ann, metaPath+".annotations", adapter.SourceWorkloadAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)
	return nil
}

// addString records a non-empty string value as a property, redacted; any
// other value is skipped.
func addString(f *adapter.Findings, name string, v any, locator string) {
	s, ok := v.(string)
	if !ok || s == "" {
		return
	}
	f.Properties = append(f.Properties, adapter.Property{Name: name, Value: podtemplate.RedactInto(s, locator, f)})
}
