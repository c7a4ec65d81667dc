package dynamo

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Name is the adapter's name, as used by the --adapters flag.
const Name = "dynamo"

// Group is the Dynamo operator's API group.
const Group = "nvidia.com"

// The kinds and versions the adapter reads.
const (
	KindGraph     = "DynamoGraphDeployment"
	KindComponent = "DynamoComponentDeployment"
	V1alpha1      = "v1alpha1"
	V1beta1       = "v1beta1"
)

// Scraper identity recorded in adapter.Findings.Scrapers, before
// podtemplate.Scraper().
const (
	ScraperName    = "dynamo"
	ScraperVersion = "0.1.0"
	ScraperMethod  = "crd-spec"
)

// Properties recorded by Scrape. Component properties are
// PropertyComponentPrefix + "<i>." + one of the suffixes.
const (
	PropertyBackendFramework = "dynamo.backendFramework"
	PropertyComponentPrefix  = "dynamo.component."
)

// MainContainer is the name the operator gives the main container in pods,
// and the name of the main container in a v1beta1 podTemplate.
const MainContainer = "main"

var podOwners = []schema.GroupKind{
	{Group: "apps", Kind: "ReplicaSet"}, {Group: "apps", Kind: "StatefulSet"}, {Group: "grove.io", Kind: "PodClique"},
}

var kinds = []adapter.Kind{
	// Pods run under Deployments (ReplicaSets), LeaderWorkerSets
	// (StatefulSets) or, on the Grove path, PodCliques.
	{Group: Group, Kind: KindGraph, Resource: "dynamographdeployments", Versions: []string{V1beta1, V1alpha1}, Role: adapter.RoleTracked,
		PodOwners: podOwners},
	{Group: Group, Kind: KindComponent, Resource: "dynamocomponentdeployments", Versions: []string{V1beta1, V1alpha1}, Role: adapter.RoleTracked,
		PodOwners: podOwners},
}

// Scraper returns the entry Scrape puts first in adapter.Findings.Scrapers.
func Scraper() adapter.Scraper {
	return adapter.Scraper{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}
}

type dynamoAdapter struct{}

// New returns the Dynamo adapter.
func New() adapter.Adapter { return dynamoAdapter{} }

func (dynamoAdapter) Name() string { return Name }

func (dynamoAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (dynamoAdapter) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("dynamo: no object")
	}
	gvk := obj.GroupVersionKind()
	if gvk.Group != Group || (gvk.Kind != KindGraph && gvk.Kind != KindComponent) ||
		(gvk.Version != V1alpha1 && gvk.Version != V1beta1) {
		return adapter.Findings{}, fmt.Errorf("dynamo: %s is not a tracked kind of this adapter", gvk)
	}
	f, err := scrape(ctx, obj, gvk)
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("dynamo: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return f, nil
}

// component is one Dynamo component: a v1alpha1 service or DCD, or a
// v1beta1 component or DCD.
type component struct {
	name string
	path string // locator of the component spec: "spec.services.X", "spec.components[0]", "spec"
	spec map[string]any
}

// scraper holds what the components of one object share.
type scraper struct {
	v1beta1  bool
	env      map[string]string // graph-level literal env
	declared bool              // spec.backendFramework names a runtime
}

func scrape(ctx context.Context, obj *unstructured.Unstructured, gvk schema.GroupVersionKind) (adapter.Findings, error) {
	spec, err := fields.Object(obj.Object, "spec", "")
	if err != nil {
		return adapter.Findings{}, err
	}
	s := &scraper{v1beta1: gvk.Version == V1beta1}
	f := adapter.Findings{Scrapers: []adapter.Scraper{Scraper(), podtemplate.Scraper()}}

	models, reds := podtemplate.ModelsFromAnnotations(obj.GetAnnotations(), "metadata.annotations", adapter.SourceWorkloadAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)

	bf, ok, err := fields.String(spec, "backendFramework", "spec")
	if err != nil {
		return adapter.Findings{}, err
	}
	if ok && bf != "" {
		f.Properties = append(f.Properties, adapter.Property{Name: PropertyBackendFramework, Value: bf})
		if name, known := RuntimeName(bf); known {
			s.declared = true
			f.Runtimes = append(f.Runtimes, adapter.Runtime{
				Name: name, Confidence: adapter.Declared,
				Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.backendFramework"},
			})
		}
	}

	var comps []component
	switch {
	case gvk.Kind == KindGraph && !s.v1beta1:
		comps, err = services(spec)
		if err == nil {
			err = s.graphEnv(spec, "envs", &f)
		}
	case gvk.Kind == KindGraph:
		comps, err = components(spec)
		if err == nil {
			err = s.graphEnv(spec, "env", &f)
		}
	default:
		key := "serviceName"
		if s.v1beta1 {
			key = "name"
		}
		var name string
		name, _, err = fields.String(spec, key, "spec")
		if name == "" {
			name = obj.GetName()
		}
		comps = []component{{name: name, path: "spec", spec: spec}}
	}
	if err != nil {
		return adapter.Findings{}, err
	}

	for i, c := range comps {
		if err := ctx.Err(); err != nil {
			return adapter.Findings{}, err
		}
		var cf adapter.Findings
		if s.v1beta1 {
			cf, err = s.v1beta1Component(i, c)
		} else {
			cf, err = s.v1alpha1Component(i, c)
		}
		if err != nil {
			return adapter.Findings{}, err
		}
		f.Merge(cf)
	}
	return f, nil
}

// services lists the components of a v1alpha1 graph, in sorted key order.
func services(spec map[string]any) ([]component, error) {
	m, err := fields.Object(spec, "services", "spec")
	if err != nil || m == nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]component, 0, len(keys))
	for _, k := range keys {
		path := fields.Path("spec.services", k)
		v := m[k]
		svc, ok := v.(map[string]any)
		if !ok && v != nil {
			return nil, fields.TypeError(path, "object", v)
		}
		out = append(out, component{name: k, path: path, spec: svc})
	}
	return out, nil
}

// components lists the components of a v1beta1 graph, in list order.
func components(spec map[string]any) ([]component, error) {
	list, err := fields.List(spec, "components", "spec")
	if err != nil {
		return nil, err
	}
	out := make([]component, 0, len(list))
	for i, v := range list {
		path := fmt.Sprintf("spec.components[%d]", i)
		c, ok := v.(map[string]any)
		if !ok {
			return nil, fields.TypeError(path, "object", v)
		}
		name, _, err := fields.String(c, "name", path)
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, fmt.Errorf("%s.name: missing", path)
		}
		out = append(out, component{name: name, path: path, spec: c})
	}
	return out, nil
}

// graphEnv reads the env applied to every component (v1alpha1 spec.envs,
// v1beta1 spec.env): its model facts once, and its literal values for
// "$(VAR)" expansion in the components.
func (s *scraper) graphEnv(spec map[string]any, key string, f *adapter.Findings) error {
	list, err := fields.List(spec, key, "spec")
	if err != nil {
		return err
	}
	env, ef, err := readEnv(list, "spec."+key)
	if err != nil {
		return err
	}
	s.env = env
	f.Merge(ef)
	return nil
}

// common reads the fields both shapes share: name, type, replicas,
// multinode.nodeCount, and modelRef. typeKey is "componentType" (v1alpha1)
// or "type" (v1beta1).
func (s *scraper) common(i int, c component, typeKey string, f *adapter.Findings) (ctype string, ref *adapter.Model, err error) {
	prefix := PropertyComponentPrefix + strconv.Itoa(i) + "."
	f.Properties = append(f.Properties, adapter.Property{Name: prefix + "name", Value: c.name})
	ctype, _, err = fields.String(c.spec, typeKey, c.path)
	if err != nil {
		return "", nil, err
	}
	if ctype != "" {
		f.Properties = append(f.Properties, adapter.Property{Name: prefix + "type", Value: ctype})
	}
	if !s.v1beta1 {
		sub, _, err := fields.String(c.spec, "subComponentType", c.path)
		if err != nil {
			return "", nil, err
		}
		if sub != "" {
			f.Properties = append(f.Properties, adapter.Property{Name: prefix + "subComponentType", Value: sub})
		}
	}
	replicas, ok, err := fields.Int(c.spec, "replicas", c.path)
	if err != nil {
		return "", nil, err
	}
	if ok {
		f.Properties = append(f.Properties, adapter.Property{Name: prefix + "replicas", Value: strconv.FormatInt(replicas, 10)})
	}
	mn, err := fields.Object(c.spec, "multinode", c.path)
	if err != nil {
		return "", nil, err
	}
	nodes, ok, err := fields.Int(mn, "nodeCount", fields.Path(c.path, "multinode"))
	if err != nil {
		return "", nil, err
	}
	if ok {
		f.Properties = append(f.Properties, adapter.Property{Name: prefix + "nodeCount", Value: strconv.FormatInt(nodes, 10)})
	}

	refPath := fields.Path(c.path, "modelRef")
	mr, err := fields.Object(c.spec, "modelRef", c.path)
	if err != nil {
		return "", nil, err
	}
	name, _, err := fields.String(mr, "name", refPath)
	if err != nil {
		return "", nil, err
	}
	rev, _, err := fields.String(mr, "revision", refPath)
	if err != nil {
		return "", nil, err
	}
	if name = strings.TrimSpace(name); name != "" {
		loc := refPath + ".name"
		ref = &adapter.Model{
			Name: podtemplate.RedactInto(name, loc, f), Version: strings.TrimSpace(rev), Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc},
		}
	}
	return ctype, ref, nil
}

// finish puts a component's findings in order: the modelRef model first,
// the claims naming the same model dropped, the detected runtime first.
func finish(f *adapter.Findings, ref *adapter.Model, detected *adapter.Runtime) {
	if ref != nil {
		models := []adapter.Model{*ref}
		for _, m := range f.Models {
			if m.Name != ref.Name {
				models = append(models, m)
			}
		}
		f.Models = models
	}
	if detected != nil {
		f.Runtimes = append([]adapter.Runtime{*detected}, f.Runtimes...)
	}
}

// detect runs DetectBackend for a worker component when the object declares
// no backend framework.
func (s *scraper) detect(ctype string, command, args []string, containerPath string) *adapter.Runtime {
	if s.declared || !workerTypes[ctype] {
		return nil
	}
	if r, ok := DetectBackend(command, args, containerPath); ok {
		return &r
	}
	return nil
}

// markMain names the main container and adds its pod name.
func markMain(f *adapter.Findings, imageLocator string) {
	for i := range f.Containers {
		c := &f.Containers[i]
		if c.Init || c.Evidence.Locator != imageLocator {
			continue
		}
		if c.Name == "" {
			c.Name = MainContainer
		}
		c.PodNames = []string{MainContainer}
	}
}

// mainArgs reads a main container's command, args and literal env, and the
// models its args give once inherited env is applied.
func (s *scraper) mainArgs(mc map[string]any, cpath string, inherited map[string]string, have []adapter.Model) (command, args []string, extra adapter.Findings, err error) {
	if command, err = fields.Strings(mc, "command", cpath); err != nil {
		return nil, nil, extra, err
	}
	if args, err = fields.Strings(mc, "args", cpath); err != nil {
		return nil, nil, extra, err
	}
	if len(inherited) == 0 {
		return command, args, extra, nil
	}
	list, err := fields.List(mc, "env", cpath)
	if err != nil {
		return nil, nil, extra, err
	}
	own, _, err := readEnv(list, fields.Path(cpath, "env"))
	if err != nil {
		return nil, nil, extra, err
	}
	extra.Models, extra.Redactions = expandedArgModels(command, args, mergeEnv(inherited, own), cpath, have)
	return command, args, extra, nil
}

// v1alpha1Component reads a v1alpha1 service (or DCD spec).
func (s *scraper) v1alpha1Component(i int, c component) (adapter.Findings, error) {
	var f adapter.Findings
	ctype, ref, err := s.common(i, c, "componentType", &f)
	if err != nil {
		return adapter.Findings{}, err
	}

	// Pod template annotations.
	meta, err := fields.Object(c.spec, "extraPodMetadata", c.path)
	if err != nil {
		return adapter.Findings{}, err
	}
	metaPath := fields.Path(c.path, "extraPodMetadata")
	ann, err := podtemplate.ModelAnnotations(meta, metaPath)
	if err != nil {
		return adapter.Findings{}, err
	}
	models, reds := podtemplate.ModelsFromAnnotations(ann, fields.Path(metaPath, "annotations"), adapter.SourcePodTemplateAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)

	// Service env.
	envList, err := fields.List(c.spec, "envs", c.path)
	if err != nil {
		return adapter.Findings{}, err
	}
	svcEnv, envF, err := readEnv(envList, fields.Path(c.path, "envs"))
	if err != nil {
		return adapter.Findings{}, err
	}

	// Containers: init containers, the main container, sidecars.
	eps, err := fields.Object(c.spec, "extraPodSpec", c.path)
	if err != nil {
		return adapter.Findings{}, err
	}
	epPath := fields.Path(c.path, "extraPodSpec")
	volumes, err := fields.List(eps, "volumes", epPath)
	if err != nil {
		return adapter.Findings{}, err
	}
	opts := podtemplate.Options{Group: c.name}
	part := func(field string) (adapter.Findings, error) {
		if eps == nil || eps[field] == nil {
			return adapter.Findings{}, nil
		}
		pf, err := podtemplate.ScrapePodSpec(map[string]any{field: eps[field], "volumes": eps["volumes"]}, epPath, opts)
		pf.Scrapers = nil
		return pf, err
	}
	inits, err := part("initContainers")
	if err != nil {
		return adapter.Findings{}, err
	}
	f.Merge(inits)

	mc, err := fields.Object(eps, "mainContainer", epPath)
	if err != nil {
		return adapter.Findings{}, err
	}
	var detected *adapter.Runtime
	if mc != nil {
		cpath := fields.Path(epPath, "mainContainer")
		mf, err := podtemplate.ScrapeContainer(mc, cpath, podtemplate.ContainerOptions{
			Group: c.name, Volumes: volumes, VolumesPath: fields.Path(epPath, "volumes"),
		})
		if err != nil {
			return adapter.Findings{}, err
		}
		dropCommandRuntimes(&mf, ctype)
		markMain(&mf, fields.Path(cpath, "image"))
		command, args, extra, err := s.mainArgs(mc, cpath, mergeEnv(s.env, svcEnv), mf.Models)
		if err != nil {
			return adapter.Findings{}, err
		}
		f.Merge(mf)
		f.Merge(extra)
		detected = s.detect(ctype, command, args, cpath)
	}

	sidecars, err := part("containers")
	if err != nil {
		return adapter.Findings{}, err
	}
	f.Merge(sidecars)
	f.Merge(envF)

	// Dynamo volume mounts: entries of spec.pvcs mounted at mountPoint.
	mounts, err := fields.List(c.spec, "volumeMounts", c.path)
	if err != nil {
		return adapter.Findings{}, err
	}
	for j, raw := range mounts {
		mpath := fmt.Sprintf("%s.volumeMounts[%d]", c.path, j)
		m, ok := raw.(map[string]any)
		if !ok {
			return adapter.Findings{}, fields.TypeError(mpath, "object", raw)
		}
		name, _, err := fields.String(m, "name", mpath)
		if err != nil {
			return adapter.Findings{}, err
		}
		point, _, err := fields.String(m, "mountPoint", mpath)
		if err != nil {
			return adapter.Findings{}, err
		}
		if name == "" || !podtemplate.IsModelPath(point) {
			continue
		}
		shown, _ := podtemplate.Redact(point) // a locator must not carry a secret
		loc := fmt.Sprintf("%s(%s)", mpath, shown)
		f.Data = append(f.Data, adapter.Data{
			Name: podtemplate.RedactInto(name, loc, &f), Kind: "pvc", Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc},
		})
	}

	finish(&f, ref, detected)
	return f, nil
}

// v1beta1Component reads a v1beta1 component (or DCD spec).
func (s *scraper) v1beta1Component(i int, c component) (adapter.Findings, error) {
	var f adapter.Findings
	ctype, ref, err := s.common(i, c, "type", &f)
	if err != nil {
		return adapter.Findings{}, err
	}
	tmpl, err := fields.Object(c.spec, "podTemplate", c.path)
	if err != nil {
		return adapter.Findings{}, err
	}
	tpath := fields.Path(c.path, "podTemplate")
	tf, err := podtemplate.ScrapeTemplate(tmpl, tpath, podtemplate.Options{Group: c.name})
	if err != nil {
		return adapter.Findings{}, err
	}
	tf.Scrapers = nil
	dropCommandRuntimes(&tf, ctype)

	// The main container is the container named "main". ScrapeTemplate has
	// checked the types of the list and of the names.
	var detected *adapter.Runtime
	podSpec, _ := tmpl["spec"].(map[string]any)
	list, _ := podSpec["containers"].([]any)
	for j, raw := range list {
		mc, _ := raw.(map[string]any)
		if name, _ := mc["name"].(string); name != MainContainer {
			continue
		}
		cpath := fmt.Sprintf("%s.spec.containers[%d]", tpath, j)
		markMain(&tf, fields.Path(cpath, "image"))
		command, args, extra, err := s.mainArgs(mc, cpath, s.env, tf.Models)
		if err != nil {
			return adapter.Findings{}, err
		}
		tf.Merge(extra)
		detected = s.detect(ctype, command, args, cpath)
		break
	}
	f.Merge(tf)
	finish(&f, ref, detected)
	return f, nil
}

// dropCommandRuntimes removes the runtimes the pod-template scraper read
// from command lines: this adapter reads a component's command itself
// (detect), knowing what the Dynamo modules run, and one reading is enough.
// A component that is not a worker (the frontend, the planner) runs no
// engine, whatever its image ships: only the platform is kept for it.
func dropCommandRuntimes(f *adapter.Findings, ctype string) {
	// The platform a Dynamo module names is kept when neither the image
	// names it nor the command names an engine (dynamo.mocker).
	keepPlatform := !namesPlatform(f.Runtimes) && !commandEngine(f.Runtimes)
	f.Runtimes = slices.DeleteFunc(f.Runtimes, func(r adapter.Runtime) bool {
		if r.Evidence.Source == adapter.SourceContainerCommand || r.Evidence.Source == adapter.SourceContainerArg {
			return !r.Platform || !keepPlatform
		}
		return ctype != "" && !workerTypes[ctype] && !r.Platform
	})
}

// namesPlatform reports whether an image names the Dynamo platform.
func namesPlatform(rs []adapter.Runtime) bool {
	for _, r := range rs {
		if r.Platform && r.Evidence.Source == adapter.SourceImagePattern {
			return true
		}
	}
	return false
}

// commandEngine reports whether a command line names an engine.
func commandEngine(rs []adapter.Runtime) bool {
	for _, r := range rs {
		if !r.Platform && (r.Evidence.Source == adapter.SourceContainerCommand || r.Evidence.Source == adapter.SourceContainerArg) {
			return true
		}
	}
	return false
}
