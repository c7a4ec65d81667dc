// Package kuberay is the adapter for the KubeRay operator's kinds (ray.io/v1):
// RayCluster, RayService and RayJob, all tracked. A RayService controls the
// RayClusters it creates (a new one on each cluster-level change) and a RayJob
// controls its RayCluster and its submitter Job, so their documents absorb
// them; the operator creates the head and worker pods directly under the
// RayCluster. A RayCluster without a tracked owner is a root of its own.
//
// # Ray clusters
//
// A RayClusterSpec (spec for a RayCluster, spec.rayClusterConfig for a
// RayService, spec.rayClusterSpec for a RayJob) is read with the podtemplate
// scraper: headGroupSpec.template grouped "head", and each
// workerGroupSpecs[i].template grouped by its groupName. Every kind declares
// the platform "ray" (source crd_field), versioned by rayVersion when set.
//
// # Ray Serve (RayService)
//
// spec.serveConfigV2 is the Ray Serve config, YAML inside a string. When it
// parses, the RayService declares the runtime "ray-serve" (source crd_field,
// locator spec.serveConfigV2), and for each application i:
//
//   - properties kuberay.serve.app.<i>.name, .importPath and .routePrefix;
//   - models named by runtime_env.env_vars that are model env vars
//     (podtemplate.IsModelEnv: MODEL_ID, MODEL, *_MODEL, ...), inferred,
//     source env_var, locator
//     "spec.serveConfigV2.applications[i].runtime_env.env_vars(NAME)";
//   - Ray Serve LLM applications (args.llm_configs[j]): the model of
//     model_loading_config.model_source (declared, source crd_field,
//     served under model_id), or of model_id when there is no source, and
//     the runtime "vllm", inferred, which Ray Serve LLM runs;
//   - a model under args.model, args.model_id or args.model_name, inferred.
//
// A serveConfigV2 that does not parse is recorded as the property
// kuberay.serve.config "unreadable"; the rest of the document stands.
//
// # Ray jobs (RayJob)
//
// spec.entrypoint is read as a shell command line with
// podtemplate.ReadCommand (models from its flags, frameworks and runtimes it
// starts), spec.runtimeEnvYAML's env_vars as for a Ray Serve application,
// and spec.submitterPodTemplate with the podtemplate scraper, grouped
// "submitter". Without a submitterPodTemplate (and in K8sJobMode, the
// default), KubeRay's submitter Job runs the head's image in a container
// named "ray-job-submitter": the head container lists that name in its
// PodNames, so the submitter pod counts among the pods running its digest.
//
// # Malformed input
//
// An absent or null field is skipped. An object or list on the path to a
// template, or a string read as a command or config, of the wrong type is an
// error naming its locator. Values of the embedded YAML configs that have an
// unexpected shape are skipped.
package kuberay

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Name is the adapter's name, as used by the --adapters flag.
const Name = "kuberay"

// Group is KubeRay's API group.
const Group = "ray.io"

// Scraper identity recorded in adapter.Findings.Scrapers.
const (
	ScraperName    = "kuberay"
	ScraperVersion = "0.1.0"
	ScraperMethod  = "crd-spec"
)

// Scraper returns the entry Scrape puts first in adapter.Findings.Scrapers.
func Scraper() adapter.Scraper {
	return adapter.Scraper{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}
}

// Runtime names.
const (
	// PlatformName is the platform every kind declares.
	PlatformName = "ray"
	// ServeRuntime is the runtime a RayService with a Serve config declares.
	ServeRuntime = "ray-serve"
	// LLMEngine is the engine Ray Serve LLM applications run.
	LLMEngine = "vllm"
)

// Properties recorded by Scrape.
const (
	PropertyRayVersion       = "kuberay.rayVersion"
	PropertyWorkerGroup      = "kuberay.workerGroup." // + "<i>.name", "<i>.replicas"
	PropertyServeApp         = "kuberay.serve.app."   // + "<i>.name", "<i>.importPath", "<i>.routePrefix"
	PropertyServeConfig      = "kuberay.serve.config"
	PropertyEntrypointPrefix = "kuberay.job."
)

// Unreadable is the value of PropertyServeConfig for a serveConfigV2 that
// does not parse.
const Unreadable = "unreadable"

// Container groups.
const (
	GroupHead      = "head"
	GroupSubmitter = "submitter"
)

var (
	rayCluster = schema.GroupKind{Group: Group, Kind: "RayCluster"}
	job        = schema.GroupKind{Group: "batch", Kind: "Job"}
)

var kinds = []adapter.Kind{
	{Group: Group, Kind: "RayCluster", Resource: "rayclusters", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{rayCluster}},
	{Group: Group, Kind: "RayService", Resource: "rayservices", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{rayCluster}},
	// A RayJob's submitter runs as a Job (K8sJobMode, the default).
	{Group: Group, Kind: "RayJob", Resource: "rayjobs", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{rayCluster, job}},
}

type kuberayAdapter struct{}

// New returns the kuberay adapter.
func New() adapter.Adapter { return kuberayAdapter{} }

func (kuberayAdapter) Name() string { return Name }

func (kuberayAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (kuberayAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("kuberay: no object")
	}
	gvk := obj.GroupVersionKind()
	if !adapter.Tracks(kinds, gvk) {
		return adapter.Findings{}, fmt.Errorf("kuberay: %s is not a tracked kind of this adapter", gvk)
	}
	f := adapter.Findings{Scrapers: []adapter.Scraper{Scraper()}}
	models, reds := podtemplate.ModelsFromAnnotations(obj.GetAnnotations(), "metadata.annotations", adapter.SourceWorkloadAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)
	if err := scrape(gvk.Kind, obj.Object, &f); err != nil {
		return adapter.Findings{}, fmt.Errorf("kuberay: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return f, nil
}

func scrape(kind string, obj map[string]any, f *adapter.Findings) error {
	spec, err := fields.Object(obj, "spec", "")
	if err != nil {
		return err
	}
	switch kind {
	case "RayCluster":
		return clusterSpec(spec, "spec", f)
	case "RayService":
		cluster, err := fields.Object(spec, "rayClusterConfig", "spec")
		if err != nil {
			return err
		}
		if err := clusterSpec(cluster, "spec.rayClusterConfig", f); err != nil {
			return err
		}
		cfg, _, err := fields.String(spec, "serveConfigV2", "spec")
		if err != nil {
			return err
		}
		if cfg != "" {
			serveConfig(cfg, f)
		}
		return nil
	default: // RayJob
		cluster, err := fields.Object(spec, "rayClusterSpec", "spec")
		if err != nil {
			return err
		}
		if err := clusterSpec(cluster, "spec.rayClusterSpec", f); err != nil {
			return err
		}
		return rayJob(spec, f)
	}
}

// clusterSpec reads a RayClusterSpec found at path.
func clusterSpec(spec map[string]any, path string, f *adapter.Findings) error {
	platform := adapter.Runtime{Name: PlatformName, Platform: true, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: path}}
	if spec == nil {
		f.Runtimes = append(f.Runtimes, platform)
		return nil
	}
	version, _, err := fields.String(spec, "rayVersion", path)
	if err != nil {
		return err
	}
	if version != "" {
		platform.Version = podtemplate.RedactInto(version, path+".rayVersion", f)
		platform.Evidence.Locator = path + ".rayVersion"
		f.Properties = append(f.Properties, adapter.Property{Name: PropertyRayVersion, Value: platform.Version})
	}
	f.Runtimes = append(f.Runtimes, platform)

	head, err := fields.Object(spec, "headGroupSpec", path)
	if err != nil {
		return err
	}
	if err := template(head, path+".headGroupSpec", GroupHead, f); err != nil {
		return err
	}
	workers, err := fields.List(spec, "workerGroupSpecs", path)
	if err != nil {
		return err
	}
	for i, raw := range workers {
		wpath := fmt.Sprintf("%s.workerGroupSpecs[%d]", path, i)
		w, ok := raw.(map[string]any)
		if !ok {
			return fields.TypeError(wpath, "object", raw)
		}
		name, _, err := fields.String(w, "groupName", wpath)
		if err != nil {
			return err
		}
		group := name
		if group == "" {
			group = fmt.Sprintf("worker-%d", i)
		}
		if err := template(w, wpath, group, f); err != nil {
			return err
		}
		prefix := fmt.Sprintf("%s%d.", PropertyWorkerGroup, i)
		if name != "" {
			f.Properties = append(f.Properties, adapter.Property{Name: prefix + "name", Value: podtemplate.RedactInto(name, wpath+".groupName", f)})
		}
		if n, ok := fields.Integer(w["replicas"]); ok {
			f.Properties = append(f.Properties, adapter.Property{Name: prefix + "replicas", Value: strconv.FormatInt(n, 10)})
		}
	}
	return nil
}

// template reads the pod template of a head or worker group spec found at
// path.
func template(group map[string]any, path, name string, f *adapter.Findings) error {
	t, err := fields.Object(group, "template", path)
	if err != nil || t == nil {
		return err
	}
	tf, err := podtemplate.ScrapeTemplate(t, path+".template", podtemplate.Options{Group: name})
	if err != nil {
		return err
	}
	podtemplate.MergeFindings(f, tf)
	return nil
}

// serveConfig reads a RayService's serveConfigV2.
func serveConfig(cfg string, f *adapter.Findings) {
	const path = "spec.serveConfigV2"
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(cfg), &doc); err != nil || doc == nil {
		f.Properties = append(f.Properties, adapter.Property{Name: PropertyServeConfig, Value: Unreadable})
		return
	}
	f.Runtimes = append(f.Runtimes, adapter.Runtime{Name: ServeRuntime, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: path}})
	apps, _ := doc["applications"].([]any)
	for i, raw := range apps {
		app, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		apath := fmt.Sprintf("%s.applications[%d]", path, i)
		prefix := fmt.Sprintf("%s%d.", PropertyServeApp, i)
		for _, k := range []struct{ key, prop string }{{"name", "name"}, {"import_path", "importPath"}, {"route_prefix", "routePrefix"}} {
			if v, ok := app[k.key].(string); ok && v != "" {
				f.Properties = append(f.Properties, adapter.Property{Name: prefix + k.prop, Value: podtemplate.RedactInto(v, apath+"."+k.key, f)})
			}
		}
		if env, ok := app["runtime_env"].(map[string]any); ok {
			envVars(env, apath+".runtime_env", f)
		}
		args, _ := app["args"].(map[string]any)
		llm := llmConfigs(args, apath+".args", f)
		if importPath, _ := app["import_path"].(string); llm || strings.HasPrefix(importPath, "ray.serve.llm") {
			f.Runtimes = append(f.Runtimes, adapter.Runtime{Name: LLMEngine, Confidence: adapter.Inferred,
				Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: apath + ".import_path"}})
		}
		for _, k := range []string{"model", "model_id", "model_name"} {
			if v, ok := args[k].(string); ok {
				podtemplate.ModelFromValue(v, adapter.Inferred, adapter.SourceCRDField, apath+".args."+k, "", f)
			}
		}
	}
}

// llmConfigs reads Ray Serve LLM's args.llm_configs and reports whether
// there were any.
func llmConfigs(args map[string]any, path string, f *adapter.Findings) bool {
	configs, _ := args["llm_configs"].([]any)
	for j, raw := range configs {
		c, ok := raw.(map[string]any)
		if !ok {
			continue // a path to a config file: nothing to read here
		}
		mlc, _ := c["model_loading_config"].(map[string]any)
		id, _ := mlc["model_id"].(string)
		src, _ := mlc["model_source"].(string)
		base := fmt.Sprintf("%s.llm_configs[%d].model_loading_config", path, j)
		// model_source is where the weights come from (a hub id or a
		// bucket); model_id is the name clients use.
		if src != "" && podtemplate.ModelFromValue(src, adapter.Declared, adapter.SourceCRDField, base+".model_source", id, f) {
			continue
		}
		if id != "" {
			podtemplate.ModelFromValue(id, adapter.Declared, adapter.SourceCRDField, base+".model_id", "", f)
		}
	}
	return len(configs) > 0
}

// envVars reads the model env vars of a Ray runtime_env found at path.
func envVars(env map[string]any, path string, f *adapter.Findings) {
	vars, _ := env["env_vars"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		v, ok := vars[name].(string)
		if !ok || podtemplate.IsSecretName(name) {
			continue
		}
		podtemplate.ModelFromEnv(name, v, fmt.Sprintf("%s.env_vars(%s)", path, name), f)
	}
}

// SubmitterContainer is the name KubeRay gives the container of the
// submitter Job it creates when a RayJob has no submitterPodTemplate.
const SubmitterContainer = "ray-job-submitter"

// defaultSubmitter records that KubeRay's default submitter runs the head's
// image: the head container (the first of the head template) is also the
// submitter pod's "ray-job-submitter" container, so that a submitter pod
// running the head's digest counts as one more pod running it.
func defaultSubmitter(f *adapter.Findings) {
	for i := range f.Containers {
		c := &f.Containers[i]
		if c.Group == GroupHead && !c.Init && strings.HasSuffix(c.Evidence.Locator, ".headGroupSpec.template.spec.containers[0].image") {
			if !slices.Contains(c.PodNames, SubmitterContainer) {
				c.PodNames = append(c.PodNames, SubmitterContainer)
			}
			return
		}
	}
}

// rayJob reads a RayJob's entrypoint, runtime env and submitter template.
func rayJob(spec map[string]any, f *adapter.Findings) error {
	entry, _, err := fields.String(spec, "entrypoint", "spec")
	if err != nil {
		return err
	}
	if entry != "" {
		cf := podtemplate.ReadCommand(podtemplate.CommandInput{Command: []string{"sh", "-c", entry}, ContainerPath: "spec.entrypoint"})
		cf.Containers = nil
		f.Merge(cf)
	}
	envYAML, _, err := fields.String(spec, "runtimeEnvYAML", "spec")
	if err != nil {
		return err
	}
	if envYAML != "" {
		var env map[string]any
		if err := yaml.Unmarshal([]byte(envYAML), &env); err == nil {
			envVars(env, "spec.runtimeEnvYAML", f)
		}
	}
	sub, err := fields.Object(spec, "submitterPodTemplate", "spec")
	if err != nil {
		return err
	}
	if sub == nil {
		mode, _, err := fields.String(spec, "submissionMode", "spec")
		if err != nil {
			return err
		}
		if mode == "" || mode == "K8sJobMode" {
			defaultSubmitter(f)
		}
		return nil
	}
	sf, err := podtemplate.ScrapeTemplate(sub, "spec.submitterPodTemplate", podtemplate.Options{Group: GroupSubmitter})
	if err != nil {
		return err
	}
	podtemplate.MergeFindings(f, sf)
	return nil
}
