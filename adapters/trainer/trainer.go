// Package trainer is the adapter for Kubeflow training: the Trainer's
// TrainJob (trainer.kubeflow.org/v1alpha1) and the training operator's
// PyTorchJob (kubeflow.org/v1), both tracked. A TrainJob is materialised as
// a JobSet (jobset.x-k8s.io/v1alpha2, walk-only here) whose Jobs run the
// pods, so the Jobs roll up into the TrainJob's document; a PyTorchJob's
// pods are created directly under it.
//
// For training, the facts that matter are the base model, the dataset and
// the trainer image. Each kind declares the training framework it runs
// (adapter.PurposeTraining, declared, source crd_field).
//
// # TrainJob
//
//   - spec.trainer is the trainer container (named "node", as in the
//     Trainer's runtimes): image, command, args, env and resourcesPerNode
//     are read with podtemplate.ScrapeContainer. Without an image the
//     runtime's image is used; the container is then not reported, but
//     what its args, env and resources say is kept.
//   - The base model: spec.initializer.model.storageUri (or the earlier
//     spec.modelConfig.input.storageUri), declared, source crd_field.
//   - The dataset: spec.initializer.dataset.storageUri (or the earlier
//     spec.datasetConfig.storageUri) as adapter.Data of kind "dataset",
//     declared; and literal values of trainer env vars whose name ends in
//     DATASET or DATASET_NAME (e.g. "BENCH_DATASET"), inferred, source
//     env_var.
//   - The framework "kubeflow-trainer", declared at spec.runtimeRef.
//   - The runtime spec.runtimeRef names (adapter.RoleReferenced): a
//     TrainingRuntime in the TrainJob's namespace or a ClusterTrainingRuntime
//     (the default kind). Its replicated jobs' pod templates are read with
//     the podtemplate scraper (the trainer image when the TrainJob sets
//     none, the initializers), located in the runtime; its
//     spec.mlPolicy.torch or .mpi declares "pytorch" or "mpi". A runtime that
//     cannot be read is a training framework claim named after it with
//     confidence unresolved.
//   - Properties: trainer.runtimeRef.kind (the Trainer's default,
//     ClusterTrainingRuntime, when unset), trainer.runtimeRef.name,
//     trainer.numNodes and trainer.numProcPerNode.
//
// # PyTorchJob
//
// Each spec.pytorchReplicaSpecs.<role>.template (Master, Worker, in sorted
// order) is read with the podtemplate scraper, grouped by the role in lower
// case. The framework "pytorch" is declared at spec.pytorchReplicaSpecs.
// Properties: pytorchjob.replicas.<role> and pytorchjob.nprocPerNode.
//
// # Malformed input
//
// An absent or null field is skipped. An object or list on the path to
// something the scraper reads, or a string it reports, of the wrong type is
// an error naming its locator.
package trainer

import (
	"context"
	"fmt"
	"maps"
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
const Name = "trainer"

// API groups of the kinds this adapter knows.
const (
	Group         = "trainer.kubeflow.org"
	GroupKubeflow = "kubeflow.org"
	GroupJobSet   = "jobset.x-k8s.io"
)

// Scraper identity recorded in adapter.Findings.Scrapers.
const (
	ScraperName    = "trainer"
	ScraperVersion = "0.1.0"
	ScraperMethod  = "crd-spec"
)

// Scraper returns the entry Scrape puts first in adapter.Findings.Scrapers.
func Scraper() adapter.Scraper {
	return adapter.Scraper{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}
}

// Framework names the kinds declare.
const (
	FrameworkTrainer = "kubeflow-trainer"
	FrameworkPyTorch = "pytorch"
)

// TrainerContainer is the name of the trainer container in the Trainer's
// runtimes.
const TrainerContainer = "node"

// DefaultRuntimeKind is the kind spec.runtimeRef names when it says none.
const DefaultRuntimeKind = "ClusterTrainingRuntime"

// Properties recorded by Scrape.
const (
	PropertyTrainerPrefix    = "trainer."
	PropertyPyTorchJobPrefix = "pytorchjob."
)

// DataKindDataset is the adapter.Data kind of a training dataset.
const DataKindDataset = "dataset"

var kinds = []adapter.Kind{
	// The JobSet's Jobs are tracked in their own right and roll up here.
	{Group: Group, Kind: "TrainJob", Resource: "trainjobs", Versions: []string{"v1alpha1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "batch", Kind: "Job"}}},
	{Group: GroupJobSet, Kind: "JobSet", Resource: "jobsets", Versions: []string{"v1alpha2"}, Role: adapter.RoleWalkOnly},
	// The runtime a TrainJob names (spec.runtimeRef).
	{Group: Group, Kind: "TrainingRuntime", Resource: "trainingruntimes", Versions: []string{"v1alpha1"}, Role: adapter.RoleReferenced},
	{Group: Group, Kind: "ClusterTrainingRuntime", Resource: "clustertrainingruntimes", Versions: []string{"v1alpha1"}, Role: adapter.RoleReferenced, ClusterScoped: true},
	{Group: GroupKubeflow, Kind: "PyTorchJob", Resource: "pytorchjobs", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: GroupKubeflow, Kind: "PyTorchJob"}}},
}

type trainerAdapter struct{}

// New returns the trainer adapter.
func New() adapter.Adapter { return trainerAdapter{} }

func (trainerAdapter) Name() string { return Name }

func (trainerAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (trainerAdapter) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("trainer: no object")
	}
	gvk := obj.GroupVersionKind()
	if !adapter.Tracks(kinds, gvk) {
		return adapter.Findings{}, fmt.Errorf("trainer: %s is not a tracked kind of this adapter", gvk)
	}
	f := adapter.Findings{Scrapers: []adapter.Scraper{Scraper()}}
	models, reds := podtemplate.ModelsFromAnnotations(obj.GetAnnotations(), "metadata.annotations", adapter.SourceWorkloadAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)
	var err error
	if gvk.Kind == "TrainJob" {
		err = trainJob(ctx, obj.Object, &f)
	} else {
		err = pyTorchJob(obj.Object, &f)
	}
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("trainer: %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return f, nil
}

func trainJob(ctx context.Context, obj map[string]any, f *adapter.Findings) error {
	spec, err := fields.Object(obj, "spec", "")
	if err != nil {
		return err
	}
	ref, err := fields.Object(spec, "runtimeRef", "spec")
	if err != nil {
		return err
	}
	kind, _, err := fields.String(ref, "kind", "spec.runtimeRef")
	if err != nil {
		return err
	}
	name, _, err := fields.String(ref, "name", "spec.runtimeRef")
	if err != nil {
		return err
	}
	if kind == "" {
		kind = DefaultRuntimeKind
	}
	if ref != nil {
		prop(f, PropertyTrainerPrefix+"runtimeRef.kind", kind, "spec.runtimeRef.kind")
		prop(f, PropertyTrainerPrefix+"runtimeRef.name", name, "spec.runtimeRef.name")
	}
	f.Frameworks = append(f.Frameworks, adapter.Framework{Name: FrameworkTrainer, Purpose: adapter.PurposeTraining, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.runtimeRef"}})

	if err := trainerContainer(spec, f); err != nil {
		return err
	}
	if name != "" {
		apiGroup, _ := ref["apiGroup"].(string)
		image, _, _ := unstructured.NestedString(spec, "trainer", "image")
		trainingRuntime(ctx, apiGroup, kind, name, image != "", f)
	}
	// The base model and the dataset: the v2.0 initializer, or the
	// earlier modelConfig / datasetConfig.
	for _, p := range [][]string{{"initializer", "model"}, {"modelConfig", "input"}} {
		uri, loc, err := storageURI(spec, p)
		if err != nil {
			return err
		}
		if uri != "" {
			podtemplate.ModelFromValue(uri, adapter.Declared, adapter.SourceCRDField, loc, "", f)
		}
	}
	for _, p := range [][]string{{"initializer", "dataset"}, {"datasetConfig"}} {
		uri, loc, err := storageURI(spec, p)
		if err != nil {
			return err
		}
		if uri != "" {
			dataset(f, uri, adapter.Declared, adapter.SourceCRDField, loc)
		}
	}
	return nil
}

// trainingRuntime looks up the runtime a TrainJob names and reads it: each
// spec.template.spec.replicatedJobs[i] pod template with the podtemplate
// scraper, grouped by the replicated job's name and located in the runtime
// ("ClusterTrainingRuntime/<name>:spec.template.spec.replicatedJobs[0]...");
// the trainer container ("node") is left out when the TrainJob overrides its
// image; spec.mlPolicy.torch or .mpi declares the framework "pytorch" or
// "mpi". A runtime that cannot be read is an unresolved training framework
// claim named after it.
func trainingRuntime(ctx context.Context, apiGroup, kind, name string, override bool, f *adapter.Findings) {
	ref := adapter.Reference{Group: Group, Kind: kind, Name: name, Locator: "spec.runtimeRef.name"}
	var obj *unstructured.Unstructured
	err := fmt.Errorf("runtimeRef.apiGroup %q is not %s", apiGroup, Group)
	if apiGroup == "" || apiGroup == Group {
		obj, err = adapter.Resolve(ctx, ref)
	}
	var rf adapter.Findings
	if err == nil {
		rf, err = readTrainingRuntime(ref, obj, override)
	}
	if err != nil {
		f.Frameworks = append(f.Frameworks, adapter.Framework{Name: podtemplate.RedactInto(name, ref.Locator, f), Purpose: adapter.PurposeTraining,
			Confidence: adapter.Unresolved, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: ref.Locator}})
		return
	}
	podtemplate.MergeFindings(f, rf)
}

func readTrainingRuntime(ref adapter.Reference, obj *unstructured.Unstructured, override bool) (adapter.Findings, error) {
	var f adapter.Findings
	jobs, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "replicatedJobs")
	if err != nil {
		return f, err
	}
	for i, raw := range jobs {
		rj, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		rjName, _ := rj["name"].(string)
		tmpl, _, _ := unstructured.NestedMap(rj, "template", "spec", "template")
		if tmpl == nil {
			continue
		}
		path := ref.FieldLocator(fmt.Sprintf("spec.template.spec.replicatedJobs[%d].template.spec.template", i))
		tf, err := podtemplate.ScrapeTemplate(tmpl, path, podtemplate.Options{Group: rjName})
		if err != nil {
			return adapter.Findings{}, err
		}
		if override {
			// spec.trainer replaces the runtime's trainer image: what that
			// image says (a framework, a runtime) is not what runs.
			var replaced []string
			for _, c := range tf.Containers {
				if c.Name == TrainerContainer {
					replaced = append(replaced, c.Evidence.Locator)
				}
			}
			tf.Containers = slices.DeleteFunc(tf.Containers, func(c adapter.Container) bool { return c.Name == TrainerContainer })
			tf.Frameworks = slices.DeleteFunc(tf.Frameworks, func(x adapter.Framework) bool {
				return x.Evidence.Source == adapter.SourceImagePattern && slices.Contains(replaced, x.Evidence.Locator)
			})
			tf.Runtimes = slices.DeleteFunc(tf.Runtimes, func(x adapter.Runtime) bool {
				return x.Evidence.Source == adapter.SourceImagePattern && slices.Contains(replaced, x.Evidence.Locator)
			})
		}
		podtemplate.MergeFindings(&f, tf)
	}
	for _, p := range []struct{ key, framework string }{{"torch", FrameworkPyTorch}, {"mpi", "mpi"}} {
		if _, ok, _ := unstructured.NestedMap(obj.Object, "spec", "mlPolicy", p.key); ok {
			f.Frameworks = append(f.Frameworks, adapter.Framework{Name: p.framework, Purpose: adapter.PurposeTraining, Confidence: adapter.Declared,
				Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: ref.FieldLocator("spec.mlPolicy." + p.key)}})
		}
	}
	f.Properties = append(f.Properties, adapter.Property{Name: PropertyTrainerPrefix + "runtimeRef.resolved",
		Value: podtemplate.RedactInto(ref.String(), ref.Locator, &f)})
	return f, nil
}

// storageURI reads "<path>.storageUri" below spec.
func storageURI(spec map[string]any, path []string) (uri, loc string, err error) {
	m, loc := spec, "spec"
	for _, k := range path {
		if m, err = fields.Object(m, k, loc); err != nil || m == nil {
			return "", "", err
		}
		loc += "." + k
	}
	uri, _, err = fields.String(m, "storageUri", loc)
	return uri, loc + ".storageUri", err
}

// trainerContainer reads spec.trainer.
func trainerContainer(spec map[string]any, f *adapter.Findings) error {
	const path = "spec.trainer"
	t, err := fields.Object(spec, "trainer", "spec")
	if err != nil || t == nil {
		return err
	}
	c := map[string]any{"name": TrainerContainer}
	for _, k := range []string{"image", "command", "args", "env"} {
		if v, ok := t[k]; ok {
			c[k] = v
		}
	}
	if r, ok := t["resourcesPerNode"]; ok {
		c["resources"] = r
	}
	cf, err := podtemplate.ScrapeContainer(c, path, podtemplate.ContainerOptions{})
	if err != nil {
		return err
	}
	// ScrapeContainer locates resources at "<path>.resources"; the field is
	// resourcesPerNode.
	for i := range cf.Accelerators {
		cf.Accelerators[i].Evidence.Locator = strings.Replace(cf.Accelerators[i].Evidence.Locator, path+".resources", path+".resourcesPerNode", 1)
	}
	cf.Containers = slices.DeleteFunc(cf.Containers, func(c adapter.Container) bool { return c.Image == "" })
	f.Merge(cf)
	env, _ := t["env"].([]any)
	for i, raw := range env {
		e, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		name, _ := e["name"].(string)
		value, _ := e["value"].(string)
		u := strings.ToUpper(name)
		if value == "" || podtemplate.IsSecretName(name) || !(strings.HasSuffix(u, "DATASET") || strings.HasSuffix(u, "DATASET_NAME")) {
			continue
		}
		dataset(f, value, adapter.Inferred, adapter.SourceEnvVar, fmt.Sprintf("%s.env[%d](%s)", path, i, name))
	}
	for _, k := range []string{"numNodes", "numProcPerNode"} {
		switch v := t[k].(type) {
		case string:
			prop(f, PropertyTrainerPrefix+k, v, path+"."+k)
		default:
			if n, ok := fields.Integer(v); ok {
				f.Properties = append(f.Properties, adapter.Property{Name: PropertyTrainerPrefix + k, Value: strconv.FormatInt(n, 10)})
			}
		}
	}
	return nil
}

// dataset records a training dataset named by value (a hub id or a storage
// URI), redacted.
func dataset(f *adapter.Findings, value string, conf adapter.Confidence, src adapter.Source, loc string) {
	if podtemplate.IsPlaceholder(value) {
		return
	}
	f.Data = append(f.Data, adapter.Data{Name: podtemplate.RedactInto(podtemplate.DatasetName(value), loc, f), Kind: DataKindDataset, Confidence: conf,
		Evidence: adapter.Evidence{Source: src, Locator: loc}})
}

func pyTorchJob(obj map[string]any, f *adapter.Findings) error {
	spec, err := fields.Object(obj, "spec", "")
	if err != nil {
		return err
	}
	const path = "spec.pytorchReplicaSpecs"
	specs, err := fields.Object(spec, "pytorchReplicaSpecs", "spec")
	if err != nil {
		return err
	}
	f.Frameworks = append(f.Frameworks, adapter.Framework{Name: FrameworkPyTorch, Purpose: adapter.PurposeTraining, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: path}})
	for _, role := range slices.Sorted(maps.Keys(specs)) {
		rpath := path + "." + role
		r, ok := specs[role].(map[string]any)
		if !ok {
			if specs[role] == nil {
				continue
			}
			return fields.TypeError(rpath, "object", specs[role])
		}
		t, err := fields.Object(r, "template", rpath)
		if err != nil {
			return err
		}
		if t != nil {
			tf, err := podtemplate.ScrapeTemplate(t, rpath+".template", podtemplate.Options{Group: strings.ToLower(role)})
			if err != nil {
				return err
			}
			podtemplate.MergeFindings(f, tf)
		}
		if n, ok := fields.Integer(r["replicas"]); ok {
			f.Properties = append(f.Properties, adapter.Property{Name: PropertyPyTorchJobPrefix + "replicas." + podtemplate.RedactInto(role, rpath, f), Value: strconv.FormatInt(n, 10)})
		}
	}
	switch v := spec["nprocPerNode"].(type) {
	case string:
		prop(f, PropertyPyTorchJobPrefix+"nprocPerNode", v, "spec.nprocPerNode")
	default:
		if n, ok := fields.Integer(v); ok {
			f.Properties = append(f.Properties, adapter.Property{Name: PropertyPyTorchJobPrefix + "nprocPerNode", Value: strconv.FormatInt(n, 10)})
		}
	}
	return nil
}

// prop records a non-empty string value, redacted.
func prop(f *adapter.Findings, name, v, locator string) {
	if v != "" {
		f.Properties = append(f.Properties, adapter.Property{Name: name, Value: podtemplate.RedactInto(v, locator, f)})
	}
}
