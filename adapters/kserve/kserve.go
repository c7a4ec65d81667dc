// Package kserve is the adapter for KServe (serving.kserve.io): the
// InferenceService (v1beta1) and the LLMInferenceService (v1alpha1 and
// v1alpha2), both tracked. KServe materialises them as Deployments (raw
// deployment mode) or as Knative Services (serverless mode: Service →
// Configuration → Revision → Deployment); the Knative kinds
// (serving.knative.dev/v1) are walk-only here, so that the Deployment under
// a Revision rolls up into its InferenceService.
//
// # InferenceService
//
// Every component (spec.predictor, spec.transformer, spec.explainer) is a
// pod spec as well as a component spec: its containers[], initContainers[]
// and volumes are read with the podtemplate scraper, the containers grouped
// by the component's name. spec.predictor.workerSpec (multi-node serving) is
// read the same way, grouped "worker".
//
// The predictor's model (spec.predictor.model, or one of the older
// framework-specific predictors such as spec.predictor.sklearn) gives:
//
//   - the serving platform "kserve", declared by the kind (source
//     crd_field, locator "spec.predictor");
//   - a runtime named after the model format (modelFormat.name, lower case,
//     or the framework key of an older predictor), inferred: KServe picks a
//     runtime that supports the format, and the format is what the owner
//     wrote;
//   - the model from storageUri (declared; hf://, s3://, gs://, pvc://, ...;
//     the model's Source is the URI) or from storage.path. An oci:// URI is
//     a "modelcar" image: its tag names the model unless the tag is a
//     version or "latest", in which case the repository's last segment does;
//   - the ServingRuntime the model names (model.runtime; adapter
//     RoleReferenced), or the ClusterServingRuntime of that name when the
//     namespace has none, as KServe resolves it: its containers are read
//     with the podtemplate scraper (images, runtimes, models), each located
//     in the runtime, "ServingRuntime/<name>:spec.containers[0].image", and
//     kserve.predictor.runtimeKind says which kind it was. Both lookups are
//     recorded in the document (the namespace one as not-found when the
//     cluster one answered): a ServingRuntime created later under that name
//     takes precedence, as in KServe, and re-reconciles the root. A runtime that
//     cannot be read (absent, forbidden, CRD not served) is a runtime claim
//     named after it with confidence unresolved;
//   - the container "kserve-container" when the model sets an image (an
//     override of the runtime's image). Its args, env and resources are
//     read even without an image, since KServe merges them into the
//     runtime's container: their models and accelerators are kept, the
//     image-less container is not reported.
//
// Properties, when set: kserve.deploymentMode (the
// serving.kserve.io/deploymentMode annotation), kserve.predictor.minReplicas,
// kserve.predictor.maxReplicas, kserve.predictor.modelFormat (name, and
// "@version" when written), kserve.predictor.runtime (the ServingRuntime or
// ClusterServingRuntime named by model.runtime), kserve.predictor.protocolVersion
// and kserve.predictor.runtimeVersion.
//
// # LLMInferenceService
//
// spec.model.uri is the model (declared, its Source the URI); spec.model.name
// is the name it is served under. spec.template (the main workload's pod
// spec), spec.worker (multi-node workers), spec.prefill.template and
// spec.prefill.worker (disaggregated prefill) and
// spec.router.scheduler.template (the endpoint picker) are pod specs read
// with the podtemplate scraper, grouped "main", "worker", "prefill",
// "prefill/worker" and "scheduler". The platform "kserve" is declared at
// "spec.model". Properties: kserve.llm.replicas,
// kserve.llm.parallelism.<kind>, kserve.llm.prefill.replicas, and
// kserve.llm.baseRef.<i> for each LLMInferenceServiceConfig named in
// spec.baseRefs.
//
// Each config named in spec.baseRefs (adapter RoleReferenced, in the
// LLMInferenceService's namespace) is read the same way, its facts located
// in it ("LLMInferenceServiceConfig/<name>:spec.template.containers[0].image"):
// KServe merges the configs under the LLMInferenceService's own spec. A
// config that cannot be read is an unresolved runtime claim named
// "LLMInferenceServiceConfig/<name>".
//
// # Malformed input
//
// An absent or null field is skipped. An object or list on the path to
// something the scraper reads, or a string it reports, of the wrong type is
// an error naming its locator. Other scalars of the wrong type are skipped.
package kserve

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Name is the adapter's name, as used by the --adapters flag.
const Name = "kserve"

// API groups of the kinds this adapter knows.
const (
	Group        = "serving.kserve.io"
	KnativeGroup = "serving.knative.dev"
)

// Scraper identity recorded in adapter.Findings.Scrapers.
const (
	ScraperName    = "kserve"
	ScraperVersion = "0.1.0"
	ScraperMethod  = "crd-spec"
)

// Scraper returns the entry Scrape puts first in adapter.Findings.Scrapers.
func Scraper() adapter.Scraper {
	return adapter.Scraper{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}
}

// PlatformName is the serving platform both kinds declare.
const PlatformName = "kserve"

// ModelContainer is the name KServe gives the container that serves a
// predictor's model.
const ModelContainer = "kserve-container"

// DeploymentModeAnnotation selects Serverless, RawDeployment (Standard) or
// ModelMesh.
const DeploymentModeAnnotation = "serving.kserve.io/deploymentMode"

// Properties recorded by Scrape (see the package documentation).
const (
	PropertyDeploymentMode  = "kserve.deploymentMode"
	PropertyPredictorPrefix = "kserve.predictor."
	PropertyLLMPrefix       = "kserve.llm."
)

// Frameworks is the list of the older framework-specific predictor keys
// (spec.predictor.<framework>), each a model spec whose format is the key.
var Frameworks = []string{"sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx", "huggingface", "pmml", "lightgbm", "paddle"}

var (
	replicaSet  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	statefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
)

var kinds = []adapter.Kind{
	// Raw deployment and serverless modes both end in a Deployment, whose
	// ReplicaSets control the pods.
	{Group: Group, Kind: "InferenceService", Resource: "inferenceservices", Versions: []string{"v1beta1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{replicaSet}},
	// llm-d style serving: Deployments, or LeaderWorkerSets (StatefulSets)
	// for multi-node workloads.
	{Group: Group, Kind: "LLMInferenceService", Resource: "llminferenceservices", Versions: []string{"v1alpha2", "v1alpha1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{replicaSet, statefulSet}},
	// The runtime a predictor's model names (model.runtime): a ServingRuntime
	// in the InferenceService's namespace, else a ClusterServingRuntime.
	{Group: Group, Kind: "ServingRuntime", Resource: "servingruntimes", Versions: []string{"v1alpha1"}, Role: adapter.RoleReferenced},
	{Group: Group, Kind: "ClusterServingRuntime", Resource: "clusterservingruntimes", Versions: []string{"v1alpha1"}, Role: adapter.RoleReferenced, ClusterScoped: true},
	// The configs an LLMInferenceService names in spec.baseRefs.
	{Group: Group, Kind: "LLMInferenceServiceConfig", Resource: "llminferenceserviceconfigs", Versions: []string{"v1alpha2", "v1alpha1"}, Role: adapter.RoleReferenced},
	{Group: KnativeGroup, Kind: "Service", Resource: "services", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly},
	{Group: KnativeGroup, Kind: "Configuration", Resource: "configurations", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly},
	{Group: KnativeGroup, Kind: "Revision", Resource: "revisions", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly},
}

type kserveAdapter struct{}

// New returns the kserve adapter.
func New() adapter.Adapter { return kserveAdapter{} }

func (kserveAdapter) Name() string { return Name }

func (kserveAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (kserveAdapter) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("kserve: no object")
	}
	gvk := obj.GroupVersionKind()
	if !adapter.Tracks(kinds, gvk) {
		return adapter.Findings{}, fmt.Errorf("kserve: %s is not a tracked kind of this adapter", gvk)
	}
	s := &scraper{ctx: ctx, obj: obj, f: adapter.Findings{Scrapers: []adapter.Scraper{Scraper()}}}
	models, reds := podtemplate.ModelsFromAnnotations(obj.GetAnnotations(), "metadata.annotations", adapter.SourceWorkloadAnnotation)
	s.f.Models = append(s.f.Models, models...)
	s.f.Redactions = append(s.f.Redactions, reds...)
	var err error
	if gvk.Kind == "InferenceService" {
		err = s.inferenceService()
	} else {
		err = s.llmInferenceService()
	}
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("kserve: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return s.f, nil
}

// ScrapeReferenced reads a ServingRuntime or ClusterServingRuntime on its
// own (adapter.ReferencedScraper): its containers with the podtemplate
// scraper, located at "spec.containers[i]", as a predictor would run them.
func (kserveAdapter) ScrapeReferenced(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("kserve: no object")
	}
	kind := obj.GroupVersionKind().Kind
	if obj.GroupVersionKind().Group != Group || (kind != "ServingRuntime" && kind != "ClusterServingRuntime") {
		return adapter.Findings{}, fmt.Errorf("kserve: %s is not a serving runtime kind", obj.GroupVersionKind())
	}
	spec, err := fields.Object(obj.Object, "spec", "")
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("kserve: %s %s: %w", kind, obj.GetName(), err)
	}
	f, err := podtemplate.ScrapePodSpec(spec, "spec", podtemplate.Options{Group: "predictor"})
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("kserve: %s %s: %w", kind, obj.GetName(), err)
	}
	f.Scrapers = append([]adapter.Scraper{Scraper()}, f.Scrapers...)
	return f, nil
}

// scraper collects the findings of one object.
type scraper struct {
	ctx context.Context
	obj *unstructured.Unstructured
	f   adapter.Findings
}

func (s *scraper) inferenceService() error {
	spec, err := fields.Object(s.obj.Object, "spec", "")
	if err != nil {
		return err
	}
	if mode := s.obj.GetAnnotations()[DeploymentModeAnnotation]; mode != "" {
		s.str(PropertyDeploymentMode, mode, "metadata.annotations["+DeploymentModeAnnotation+"]")
	}
	for _, component := range []string{"predictor", "transformer", "explainer"} {
		c, err := fields.Object(spec, component, "spec")
		if err != nil {
			return err
		}
		if c == nil {
			continue
		}
		cpath := "spec." + component
		if component == "predictor" {
			if err := s.predictor(c, cpath); err != nil {
				return err
			}
		}
		if err := s.podSpec(c, cpath, component); err != nil {
			return err
		}
	}
	return nil
}

// predictor reads spec.predictor: its model (or older framework predictor),
// its worker spec and its replica bounds.
func (s *scraper) predictor(p map[string]any, ppath string) error {
	s.platform(ppath)
	model, err := fields.Object(p, "model", ppath)
	if err != nil {
		return err
	}
	if model != nil {
		if err := s.modelSpec(model, p, ppath+".model", ""); err != nil {
			return err
		}
	}
	for _, fw := range Frameworks {
		m, err := fields.Object(p, fw, ppath)
		if err != nil {
			return err
		}
		if m != nil {
			if err := s.modelSpec(m, p, ppath+"."+fw, fw); err != nil {
				return err
			}
		}
	}
	worker, err := fields.Object(p, "workerSpec", ppath)
	if err != nil {
		return err
	}
	if worker != nil {
		if err := s.podSpec(worker, ppath+".workerSpec", "worker"); err != nil {
			return err
		}
		for _, k := range []string{"tensorParallelSize", "pipelineParallelSize"} {
			if n, ok := fields.Integer(worker[k]); ok {
				s.prop(PropertyPredictorPrefix+"workerSpec."+k, strconv.FormatInt(n, 10))
			}
		}
	}
	for _, k := range []string{"minReplicas", "maxReplicas"} {
		if n, ok := fields.Integer(p[k]); ok {
			s.prop(PropertyPredictorPrefix+k, strconv.FormatInt(n, 10))
		}
	}
	return nil
}

// modelSpec reads a predictor's model spec found at mpath. framework is the
// key of an older framework-specific predictor, empty for
// spec.predictor.model.
func (s *scraper) modelSpec(m, predictor map[string]any, mpath, framework string) error {
	format, formatLoc := framework, mpath
	mf, err := fields.Object(m, "modelFormat", mpath)
	if err != nil {
		return err
	}
	if mf != nil {
		name, _, err := fields.String(mf, "name", mpath+".modelFormat")
		if err != nil {
			return err
		}
		if name != "" {
			format, formatLoc = name, mpath+".modelFormat.name"
		}
		value := name
		if v, ok := mf["version"].(string); ok && v != "" && name != "" {
			value += "@" + v
		}
		s.str(PropertyPredictorPrefix+"modelFormat", value, mpath+".modelFormat")
	} else if framework != "" {
		s.prop(PropertyPredictorPrefix+"modelFormat", framework)
	}
	if format != "" {
		s.f.Runtimes = append(s.f.Runtimes, adapter.Runtime{
			Name: s.redact(strings.ToLower(format), formatLoc), Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: formatLoc},
		})
	}
	runtime, _, err := fields.String(m, "runtime", mpath)
	if err != nil {
		return err
	}
	s.str(PropertyPredictorPrefix+"runtime", runtime, mpath+".runtime")
	if runtime != "" {
		image, _ := m["image"].(string)
		s.servingRuntime(runtime, mpath+".runtime", image != "")
	}
	for _, k := range []string{"protocolVersion", "runtimeVersion"} {
		if v, ok := m[k].(string); ok {
			s.str(PropertyPredictorPrefix+k, v, mpath+"."+k)
		}
	}

	uri, _, err := fields.String(m, "storageUri", mpath)
	if err != nil {
		return err
	}
	if uri != "" {
		s.storageURI(uri, mpath+".storageUri")
	}
	storage, err := fields.Object(m, "storage", mpath)
	if err != nil {
		return err
	}
	if sp, ok := storage["path"].(string); ok && sp != "" && uri == "" {
		// storage.path is a path inside the storage the key names.
		podtemplate.ModelFromValue("/"+strings.TrimLeft(sp, "/"), adapter.Declared, adapter.SourceCRDField, mpath+".storage.path", "", &s.f)
	}
	return s.modelContainer(m, predictor, mpath)
}

// modelContainer reads the container fields inlined in a model spec. With an
// image, it is the container KServe runs the model in; without one, its
// args, env and resources still reach the runtime's container, so what they
// say is kept and the image-less container is not reported.
func (s *scraper) modelContainer(m, predictor map[string]any, mpath string) error {
	c := map[string]any{"name": ModelContainer}
	for _, k := range []string{"image", "command", "args", "env", "volumeMounts", "resources"} {
		if v, ok := m[k]; ok {
			c[k] = v
		}
	}
	if name, ok := m["name"].(string); ok && name != "" {
		c["name"] = name
	}
	volumes, err := fields.List(predictor, "volumes", "spec.predictor")
	if err != nil {
		return err
	}
	cf, err := podtemplate.ScrapeContainer(c, mpath, podtemplate.ContainerOptions{Volumes: volumes, VolumesPath: "spec.predictor.volumes", Group: "predictor"})
	if err != nil {
		return err
	}
	cf.Containers = slices.DeleteFunc(cf.Containers, func(c adapter.Container) bool { return c.Image == "" })
	for i := range cf.Containers {
		cf.Containers[i].PodNames = []string{ModelContainer}
	}
	podtemplate.MergeFindings(&s.f, cf)
	return nil
}

// servingRuntime looks up the runtime a model names, as KServe does: the
// ServingRuntime of that name in the InferenceService's namespace, else the
// ClusterServingRuntime. Its containers are read with the podtemplate
// scraper, located in the runtime ("ServingRuntime/<name>:spec.containers[0].image");
// when the model overrides the image, the runtime's model container is not
// reported (KServe runs the override). A runtime that cannot be read is an
// unresolved runtime claim named after it.
func (s *scraper) servingRuntime(name, locator string, override bool) {
	ref := adapter.Reference{Group: Group, Kind: "ServingRuntime", Name: name, Locator: locator}
	obj, err := adapter.Resolve(s.ctx, ref)
	if adapter.UnresolvedReason(err) == adapter.ReasonNotFound {
		ref.Kind = "ClusterServingRuntime"
		obj, err = adapter.Resolve(s.ctx, ref)
	}
	var rf adapter.Findings
	if err == nil {
		spec, _ := obj.Object["spec"].(map[string]any)
		rf, err = podtemplate.ScrapePodSpec(spec, ref.FieldLocator("spec"), podtemplate.Options{Group: "predictor"})
	}
	if err != nil {
		s.f.Runtimes = append(s.f.Runtimes, adapter.Runtime{
			Name: s.redact(name, locator), Confidence: adapter.Unresolved,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: locator},
		})
		return
	}
	s.prop(PropertyPredictorPrefix+"runtimeKind", ref.Kind)
	if override {
		rf.Containers = slices.DeleteFunc(rf.Containers, func(c adapter.Container) bool { return c.Name == ModelContainer })
	}
	podtemplate.MergeFindings(&s.f, rf)
}

// storageURI records the model a storage URI names.
func (s *scraper) storageURI(uri, loc string) {
	if rest, ok := strings.CutPrefix(uri, "oci://"); ok {
		repo, tag, _ := podtemplate.ParseImage(rest)
		name, version := tag, ""
		if tag == "" || tag == "latest" || podtemplate.IsVersionTag(tag) {
			name, version = path.Base(repo), tag
		}
		if name == "" || name == "." || podtemplate.IsPlaceholder(name) {
			return
		}
		s.f.Models = append(s.f.Models, adapter.Model{
			Name: s.redact(name, loc), Version: version, Source: s.redact(uri, loc), Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc},
		})
		return
	}
	podtemplate.ModelFromValue(uri, adapter.Declared, adapter.SourceCRDField, loc, "", &s.f)
}

// podSpec reads a pod spec found at ppath, its containers grouped by group.
// Nothing is merged when the spec runs no container.
func (s *scraper) podSpec(spec map[string]any, ppath, group string) error {
	pf, err := podtemplate.ScrapePodSpec(spec, ppath, podtemplate.Options{Group: group})
	if err != nil {
		return err
	}
	if len(pf.Containers) > 0 || len(pf.Accelerators) > 0 {
		podtemplate.MergeFindings(&s.f, pf)
	}
	return nil
}

func (s *scraper) llmInferenceService() error {
	spec, err := fields.Object(s.obj.Object, "spec", "")
	if err != nil {
		return err
	}
	s.platform("spec.model")
	if err := s.llmSpec(spec, "spec", PropertyLLMPrefix); err != nil {
		return err
	}
	refs, err := fields.List(spec, "baseRefs", "spec")
	if err != nil {
		return err
	}
	for i, raw := range refs {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		loc := fmt.Sprintf("spec.baseRefs[%d].name", i)
		s.str(fmt.Sprintf("%sbaseRef.%d", PropertyLLMPrefix, i), m["name"], loc)
		if name, ok := m["name"].(string); ok && name != "" {
			s.llmConfig(name, loc)
		}
	}
	return nil
}

// llmConfig looks up an LLMInferenceServiceConfig the LLMInferenceService
// names in spec.baseRefs and reads its spec (the same shape as the
// LLMInferenceService's, which KServe merges over it), each fact located in
// the config. A config that cannot be read (one of KServe's well-known
// configs lives in KServe's own namespace, which is never read for a root
// of another namespace) is an unresolved runtime claim named after it.
func (s *scraper) llmConfig(name, locator string) {
	ref := adapter.Reference{Group: Group, Kind: "LLMInferenceServiceConfig", Name: name, Locator: locator}
	obj, err := adapter.Resolve(s.ctx, ref)
	if err == nil {
		sub := &scraper{ctx: s.ctx, obj: obj}
		spec, _ := obj.Object["spec"].(map[string]any)
		if err = sub.llmSpec(spec, ref.FieldLocator("spec"), ""); err == nil {
			sub.f.Properties = nil // the root's own properties describe it
			podtemplate.MergeFindings(&s.f, sub.f)
			return
		}
	}
	s.f.Runtimes = append(s.f.Runtimes, adapter.Runtime{
		Name: s.redact(ref.String(), locator), Confidence: adapter.Unresolved,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: locator},
	})
}

// llmSpec reads an LLMInferenceService spec found at base: the model, the
// main and prefill workloads and the scheduler's template. propPrefix
// prefixes the properties it records ("" records none).
func (s *scraper) llmSpec(spec map[string]any, base, propPrefix string) error {
	model, err := fields.Object(spec, "model", base)
	if err != nil {
		return err
	}
	if model != nil {
		uri, _, err := fields.String(model, "uri", base+".model")
		if err != nil {
			return err
		}
		served, _, err := fields.String(model, "name", base+".model")
		if err != nil {
			return err
		}
		recorded := false
		if uri != "" {
			n := len(s.f.Models)
			s.storageURI(uri, base+".model.uri")
			recorded = len(s.f.Models) > n
			for i := n; i < len(s.f.Models); i++ {
				if served != "" && served != s.f.Models[i].Name {
					s.f.Models[i].ServedName = s.redact(served, base+".model.name")
				}
			}
		}
		if !recorded && served != "" {
			podtemplate.ModelFromValue(served, adapter.Declared, adapter.SourceCRDField, base+".model.name", "", &s.f)
		}
	}
	if err := s.workload(spec, base, "", propPrefix); err != nil {
		return err
	}
	prefill, err := fields.Object(spec, "prefill", base)
	if err != nil {
		return err
	}
	if prefill != nil {
		pp := ""
		if propPrefix != "" {
			pp = propPrefix + "prefill."
		}
		if err := s.workload(prefill, base+".prefill", "prefill", pp); err != nil {
			return err
		}
	}
	router, err := fields.Object(spec, "router", base)
	if err != nil {
		return err
	}
	sched, err := fields.Object(router, "scheduler", base+".router")
	if err != nil {
		return err
	}
	tmpl, err := fields.Object(sched, "template", base+".router.scheduler")
	if err != nil {
		return err
	}
	if tmpl != nil {
		if err := s.podSpec(tmpl, base+".router.scheduler.template", "scheduler"); err != nil {
			return err
		}
	}
	return nil
}

// workload reads an LLMInferenceService workload spec (the spec itself, or
// spec.prefill): its template and worker pod specs, replicas and
// parallelism. prefix names the groups ("" for the main workload).
func (s *scraper) workload(w map[string]any, wpath, prefix, propPrefix string) error {
	for _, part := range []struct{ key, group string }{{"template", "main"}, {"worker", "worker"}} {
		group := part.group
		if prefix != "" {
			group = prefix
			if part.key == "worker" {
				group = prefix + "/worker"
			}
		}
		ps, err := fields.Object(w, part.key, wpath)
		if err != nil {
			return err
		}
		if ps != nil {
			if err := s.podSpec(ps, wpath+"."+part.key, group); err != nil {
				return err
			}
		}
	}
	if propPrefix == "" {
		return nil
	}
	if n, ok := fields.Integer(w["replicas"]); ok {
		s.prop(propPrefix+"replicas", strconv.FormatInt(n, 10))
	}
	if par, ok := w["parallelism"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(par)) {
			if n, ok := fields.Integer(par[k]); ok {
				s.prop(propPrefix+"parallelism."+k, strconv.FormatInt(n, 10))
			}
		}
	}
	return nil
}

// platform records the serving platform the kind declares.
func (s *scraper) platform(loc string) {
	for _, r := range s.f.Runtimes {
		if r.Name == PlatformName && r.Platform {
			return
		}
	}
	s.f.Runtimes = append(s.f.Runtimes, adapter.Runtime{
		Name: PlatformName, Platform: true, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc},
	})
}

func (s *scraper) prop(name, value string) {
	s.f.Properties = append(s.f.Properties, adapter.Property{Name: name, Value: value})
}

// str records a non-empty string value, redacted; any other value is
// skipped.
func (s *scraper) str(name string, v any, locator string) {
	if str, ok := v.(string); ok && str != "" {
		s.prop(name, s.redact(str, locator))
	}
}

func (s *scraper) redact(v, locator string) string { return podtemplate.RedactInto(v, locator, &s.f) }
