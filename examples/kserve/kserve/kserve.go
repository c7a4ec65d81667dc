// Package kserve is an out-of-tree aibom adapter for KServe: it reads
// InferenceService (serving.kserve.io/v1beta1) objects. It is an example of
// an adapter served as a plugin (see ../main.go and docs/plugins.md); it
// implements the same pkg/adapter contract as the in-tree adapters.
//
// What it finds in spec.predictor:
//
//   - runtimes, declared: the model format (model.modelFormat.name, with
//     model.modelFormat.version), and the ServingRuntime the model names
//     (model.runtime) when set;
//   - the model, declared: model.storageUri, with any credentials in the URI
//     masked and recorded;
//   - containers: the model's image override (model.image, with the model's
//     inline container fields: args, env, volume mounts) as the container
//     KServe names "kserve-container", and a custom predictor's containers
//     (predictor.containers), read like any pod spec;
//   - properties: the predictor's minReplicas and maxReplicas, and the
//     deployment mode annotation.
package kserve

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Name is the adapter's name.
const Name = "kserve"

// Scraper identity.
const (
	ScraperName    = "kserve"
	ScraperVersion = "0.1.0"
	ScraperMethod  = "crd-spec"
)

// The container KServe runs a predictor's model in.
const ModelContainer = "kserve-container"

// Properties recorded on documents.
const (
	PropertyMinReplicas    = "kserve.predictor.minReplicas"
	PropertyMaxReplicas    = "kserve.predictor.maxReplicas"
	PropertyDeploymentMode = "kserve.deploymentMode"
	// DeploymentModeAnnotation selects Serverless, RawDeployment or
	// ModelMesh.
	DeploymentModeAnnotation = "serving.kserve.io/deploymentMode"
)

var kinds = []adapter.Kind{
	{Group: "serving.kserve.io", Kind: "InferenceService", Resource: "inferenceservices", Versions: []string{"v1beta1"}, Role: adapter.RoleTracked},
}

type kserveAdapter struct{}

// New returns the adapter.
func New() adapter.Adapter { return kserveAdapter{} }

func (kserveAdapter) Name() string { return Name }

func (kserveAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (kserveAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("kserve: no object")
	}
	gvk := obj.GroupVersionKind()
	if gvk.Group != kinds[0].Group || gvk.Kind != kinds[0].Kind || gvk.Version != "v1beta1" {
		return adapter.Findings{}, fmt.Errorf("kserve: %s is not a tracked kind of this adapter", gvk)
	}
	f, err := scrape(obj)
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("kserve: InferenceService %s: %w", obj.GetName(), err)
	}
	return f, nil
}

func scrape(obj *unstructured.Unstructured) (adapter.Findings, error) {
	f := adapter.Findings{Scrapers: []adapter.Scraper{{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}}}
	spec, err := fields.Object(obj.Object, "spec", "")
	if err != nil {
		return adapter.Findings{}, err
	}
	predictor, err := fields.Object(spec, "predictor", "spec")
	if err != nil {
		return adapter.Findings{}, err
	}
	const ppath = "spec.predictor"
	model, err := fields.Object(predictor, "model", ppath)
	if err != nil {
		return adapter.Findings{}, err
	}
	if err := scrapeModel(model, predictor, ppath+".model", &f); err != nil {
		return adapter.Findings{}, err
	}

	// A custom predictor is a pod spec; its findings come with the
	// podtemplate scraper's entry, and the workload's model annotations.
	pod, err := podtemplate.ScrapePodSpec(predictor, ppath, podtemplate.Options{WorkloadAnnotations: obj.GetAnnotations()})
	if err != nil {
		return adapter.Findings{}, err
	}
	if len(pod.Containers) > 0 || len(pod.Models) > 0 {
		podtemplate.MergeFindings(&f, pod)
	}

	for _, p := range []struct{ key, name string }{{"minReplicas", PropertyMinReplicas}, {"maxReplicas", PropertyMaxReplicas}} {
		n, ok, err := fields.Int(predictor, p.key, ppath)
		if err != nil {
			return adapter.Findings{}, err
		}
		if ok {
			f.Properties = append(f.Properties, adapter.Property{Name: p.name, Value: strconv.FormatInt(n, 10)})
		}
	}
	if mode, ok := obj.GetAnnotations()[DeploymentModeAnnotation]; ok && mode != "" {
		loc := "metadata.annotations[" + DeploymentModeAnnotation + "]"
		f.Properties = append(f.Properties, adapter.Property{Name: PropertyDeploymentMode, Value: podtemplate.RedactInto(mode, loc, &f)})
	}
	return f, nil
}

// scrapeModel reads spec.predictor.model.
func scrapeModel(model, predictor map[string]any, path string, f *adapter.Findings) error {
	if model == nil {
		return nil
	}
	format, err := fields.Object(model, "modelFormat", path)
	if err != nil {
		return err
	}
	if format != nil {
		fpath := path + ".modelFormat"
		name, ok, err := fields.String(format, "name", fpath)
		if err != nil {
			return err
		}
		version, _, err := fields.String(format, "version", fpath)
		if err != nil {
			return err
		}
		if ok && name != "" {
			loc := fpath + ".name"
			f.Runtimes = append(f.Runtimes, adapter.Runtime{
				Name: podtemplate.RedactInto(name, loc, f), Version: podtemplate.RedactInto(version, fpath+".version", f),
				Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc},
			})
		}
	}
	runtime, ok, err := fields.String(model, "runtime", path)
	if err != nil {
		return err
	}
	if ok && runtime != "" {
		loc := path + ".runtime"
		f.Runtimes = append(f.Runtimes, adapter.Runtime{
			Name: podtemplate.RedactInto(runtime, loc, f), Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc},
		})
	}
	uri, ok, err := fields.String(model, "storageUri", path)
	if err != nil {
		return err
	}
	if ok && uri != "" {
		loc := path + ".storageUri"
		f.Models = append(f.Models, adapter.Model{
			Name: podtemplate.RedactInto(uri, loc, f), Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc},
		})
	}

	// The model spec inlines a container: with an image, it overrides the
	// serving runtime's, and its args, env and mounts are read like any
	// container's.
	image, ok, err := fields.String(model, "image", path)
	if err != nil {
		return err
	}
	if !ok || image == "" {
		return nil
	}
	c := maps.Clone(model)
	if name, _, err := fields.String(c, "name", path); err != nil {
		return err
	} else if name == "" {
		c["name"] = ModelContainer
	}
	volumes, err := fields.List(predictor, "volumes", "spec.predictor")
	if err != nil {
		return err
	}
	cf, err := podtemplate.ScrapeContainer(c, path, podtemplate.ContainerOptions{Volumes: volumes, VolumesPath: "spec.predictor.volumes"})
	if err != nil {
		return err
	}
	podtemplate.MergeFindings(f, cf)
	return nil
}
