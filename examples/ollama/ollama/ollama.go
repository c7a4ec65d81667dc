// Package ollama is an out-of-tree aibom adapter for the Ollama operator
// (github.com/nekomeowww/ollama-operator): it reads its Model kind
// (ollama.ayaka.io/v1), one Ollama model served by the operator. It is an
// example of an adapter served as a plugin (see ../main.go and
// docs/plugins.md); it implements the same pkg/adapter contract as the
// in-tree adapters, and claims a kind nothing in tree claims.
//
// The operator serves each Model with a Deployment it controls; that
// Deployment rolls up into the Model's document, and its pods' digests
// reach it.
//
// What it finds:
//
//   - the container "server" that runs the Ollama server: the operator
//     chooses its image (a Model names a model, not a server image), so the
//     adapter reports it without one (adapter.Container.ImageFromPods) and
//     the controller reads the image and the running digest from the
//     status of the Model's pods;
//   - the runtime "ollama", declared by the kind (source crd_field, locator
//     spec.image);
//   - the model, declared: spec.image is an Ollama model reference
//     ("phi", "llama3.1:8b", "registry.ollama.ai/library/qwen2.5:7b"), the
//     tag being the model's version; the model's Source is "ollama://" and
//     the reference;
//   - accelerators requested in spec.resources;
//   - properties: ollama.replicas, ollama.storageClassName and
//     ollama.persistentVolumeClaim when set.
//
// A spec.image that is not a string is an error; a Model without one is
// an error too (the operator requires it).
package ollama

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/fields"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Name is the adapter's name.
const Name = "ollama"

// Group is the Ollama operator's API group.
const Group = "ollama.ayaka.io"

// Scraper identity.
const (
	ScraperName    = "ollama"
	ScraperVersion = "0.1.0"
	ScraperMethod  = "crd-spec"
)

// RuntimeName is the runtime a Model declares.
const RuntimeName = adapter.RuntimeOllama

// ServerContainer is the name of the container the operator runs the
// Ollama server in, in the pods of a Model's Deployment.
const ServerContainer = "server"

// Properties recorded on documents.
const (
	PropertyReplicas              = "ollama.replicas"
	PropertyStorageClassName      = "ollama.storageClassName"
	PropertyPersistentVolumeClaim = "ollama.persistentVolumeClaim"
)

var kinds = []adapter.Kind{
	// The operator serves a Model with a Deployment: pods under its
	// ReplicaSets.
	{Group: Group, Kind: "Model", Resource: "models", Versions: []string{"v1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}},
}

type ollamaAdapter struct{}

// New returns the adapter.
func New() adapter.Adapter { return ollamaAdapter{} }

func (ollamaAdapter) Name() string { return Name }

func (ollamaAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (ollamaAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("ollama: no object")
	}
	if !adapter.Tracks(kinds, obj.GroupVersionKind()) {
		return adapter.Findings{}, fmt.Errorf("ollama: %s is not a tracked kind of this adapter", obj.GroupVersionKind())
	}
	f, err := scrape(obj)
	if err != nil {
		return adapter.Findings{}, fmt.Errorf("ollama: Model %s: %w", obj.GetName(), err)
	}
	return f, nil
}

func scrape(obj *unstructured.Unstructured) (adapter.Findings, error) {
	f := adapter.Findings{Scrapers: []adapter.Scraper{{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}}}
	models, reds := podtemplate.ModelsFromAnnotations(obj.GetAnnotations(), "metadata.annotations", adapter.SourceWorkloadAnnotation)
	f.Models = append(f.Models, models...)
	f.Redactions = append(f.Redactions, reds...)

	spec, err := fields.Object(obj.Object, "spec", "")
	if err != nil {
		return adapter.Findings{}, err
	}
	image, _, err := fields.String(spec, "image", "spec")
	if err != nil {
		return adapter.Findings{}, err
	}
	if image == "" {
		return adapter.Findings{}, fmt.Errorf("spec.image: the model to serve is required")
	}
	ev := adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.image"}
	// The Model makes the operator run the server; its image is the
	// operator's choice, read from the pods.
	f.Containers = append(f.Containers, adapter.Container{Name: ServerContainer, ImageFromPods: true,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec"}})
	f.Runtimes = append(f.Runtimes, adapter.Runtime{Name: RuntimeName, Confidence: adapter.Declared, Evidence: ev})
	name, version := modelOf(image)
	f.Models = append(f.Models, adapter.Model{
		Name:    podtemplate.RedactInto(name, "spec.image", &f),
		Version: podtemplate.RedactInto(version, "spec.image", &f),
		Source:  podtemplate.RedactInto("ollama://"+image, "spec.image", &f), Confidence: adapter.Declared, Evidence: ev,
	})

	// The resources go to the Ollama container: read them as a container's.
	if res, ok := spec["resources"]; ok {
		cf, err := podtemplate.ScrapeContainer(map[string]any{"name": "ollama", "resources": res}, "spec", podtemplate.ContainerOptions{})
		if err != nil {
			return adapter.Findings{}, err
		}
		f.Accelerators = append(f.Accelerators, cf.Accelerators...)
	}
	if n, ok := fields.Integer(spec["replicas"]); ok {
		f.Properties = append(f.Properties, adapter.Property{Name: PropertyReplicas, Value: strconv.FormatInt(n, 10)})
	}
	for _, p := range []struct{ key, name string }{{"storageClassName", PropertyStorageClassName}, {"persistentVolumeClaim", PropertyPersistentVolumeClaim}} {
		if v, ok := spec[p.key].(string); ok && v != "" {
			f.Properties = append(f.Properties, adapter.Property{Name: p.name, Value: podtemplate.RedactInto(v, "spec."+p.key, &f)})
		}
	}
	return f, nil
}

// modelOf splits an Ollama model reference into name and tag: the
// registry and the "library/" namespace of the default registry are not
// part of the name.
func modelOf(ref string) (name, tag string) {
	name = ref
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	name = strings.TrimPrefix(name, "registry.ollama.ai/")
	name = strings.TrimPrefix(name, "library/")
	return name, tag
}
