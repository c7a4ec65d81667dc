package adapter

import (
	"fmt"
	"strings"
)

// Confidence says how a fact is known.
type Confidence string

const (
	// Declared: the owner wrote it (a --model arg, a CRD field, an annotation,
	// a digest-pinned image).
	Declared Confidence = "declared"
	// Inferred: a heuristic found it (an image pattern, an env-var convention,
	// a volume mounted at /models).
	Inferred Confidence = "inferred"
	// Unresolved: the fact is expected but not known (no digest yet).
	Unresolved Confidence = "unresolved"
)

// Rank orders confidences from weakest (0, unresolved) to strongest.
func (c Confidence) Rank() int {
	switch c {
	case Declared:
		return 2
	case Inferred:
		return 1
	default:
		return 0
	}
}

// Source is where a fact was read. The set is closed: documents only ever
// carry these values.
type Source string

// The evidence sources.
const (
	SourceCRDField              Source = "crd_field"
	SourceContainerArg          Source = "container_arg"
	SourceContainerCommand      Source = "container_command"
	SourceEnvVar                Source = "env_var"
	SourceImageReference        Source = "image_reference"
	SourceImagePattern          Source = "image_pattern"
	SourcePodStatus             Source = "pod_status"
	SourceWorkloadAnnotation    Source = "workload_annotation"
	SourcePodTemplateAnnotation Source = "pod_template_annotation"
	SourceVolumeSource          Source = "volume_source"
	SourceResourceRequest       Source = "resource_request"
	SourcePodTemplateLabel      Source = "pod_template_label"
)

// Evidence locates a fact: its source and the path of the field in the
// object, e.g. "spec.template.spec.containers[0].args[3](--model)".
type Evidence struct {
	Source  Source `json:"source"`
	Locator string `json:"locator"`
}

// Findings is what an adapter read from one tracked object.
type Findings struct {
	// Scrapers names the scrapers that contributed, in order. Each becomes
	// aibom.scrape.<i>.* properties on the document.
	Scrapers []Scraper `json:"scrapers,omitempty"`
	// Containers lists every container and init container the object runs.
	Containers []Container `json:"containers,omitempty"`
	// Runtimes lists serving runtime claims (vllm, sglang, nim, ...).
	Runtimes []Runtime `json:"runtimes,omitempty"`
	// Models lists model claims.
	Models []Model `json:"models,omitempty"`
	// Data lists model storage (volumes at model paths, caches, PVCs).
	Data []Data `json:"data,omitempty"`
	// Frameworks lists evaluation and training frameworks the object runs
	// (lm-evaluation-harness, torchrun, accelerate, DeepSpeed, TRL): AI
	// workloads that are not serving runtimes.
	Frameworks []Framework `json:"frameworks,omitempty"`
	// Accelerators lists accelerator requests and limits (nvidia.com/gpu,
	// google.com/tpu, ...) and dynamic resource claims.
	Accelerators []Accelerator `json:"accelerators,omitempty"`
	// Properties are kind-specific facts, e.g. dynamo.component.0.type.
	Properties []Property `json:"properties,omitempty"`
	// Redactions records every value withheld or masked because it looked
	// like a secret. Redaction is never silent.
	Redactions []Redaction `json:"redactions,omitempty"`
}

// Scraper identifies a scraper and how it read the object.
type Scraper struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Method is a short word for how it read: "pod-template", "crd-spec", ...
	Method string `json:"method"`
}

// Container is one container or init container of a tracked object.
type Container struct {
	// Name is the container's name in the spec, or, for a container the
	// operator adds itself, the name it gives the container in its pods.
	Name string `json:"name"`
	// Image is the image reference as written in the spec; empty when
	// ImageFromPods is set.
	Image string `json:"image"`
	// ImageFromPods says that the object names no image for this
	// container because the operator chooses it (KubeAI picks its engine's
	// image from spec.engine, KAITO from a preset): the core reads the image
	// and the running digest from the status of the pods attributed to the
	// workload, matching the container by Name (or PodNames), and the
	// document says so (evidence source pod_status, located at the pod's
	// status.containerStatuses[name=<name>].image). Until such a pod runs,
	// the container is listed with its image and digest unresolved: an
	// image is never guessed. Evidence then locates the field that makes
	// the operator run the container (e.g. "spec.engine"), not an image.
	// Set Image or ImageFromPods, never both (Validate); a container with
	// both is read as if only Image were set.
	ImageFromPods bool `json:"imageFromPods,omitempty"`
	// Init is true for init containers.
	Init bool `json:"init,omitempty"`
	// PodNames lists other names the running container may carry in pod
	// status, when an operator renames it (NIM's "<name>-ctr", "nim-leader").
	// The core matches a pod container on repository first, name second.
	PodNames []string `json:"podNames,omitempty"`
	// Group names the part of the workload the container belongs to, e.g. a
	// Dynamo component or an LWS role; empty for plain workloads.
	Group string `json:"group,omitempty"`
	// Evidence locates the image field.
	Evidence Evidence `json:"evidence"`
}

// Validate reports what is wrong with a container finding: it needs a
// name, and either an image as written or ImageFromPods, not both.
func (c Container) Validate() error {
	switch {
	case strings.TrimSpace(c.Name) == "":
		return fmt.Errorf("container without a name (image %q): report the container's name", c.Image)
	case c.Image == "" && !c.ImageFromPods:
		return fmt.Errorf("container %q has no image: report the image as written in the spec, or set ImageFromPods when the operator chooses the image; skip a container that has neither", c.Name)
	case c.Image != "" && c.ImageFromPods:
		return fmt.Errorf("container %q sets both an image (%q) and ImageFromPods: ImageFromPods is for a container whose object names no image", c.Name, c.Image)
	}
	return nil
}

// Runtime is a serving runtime claim.
type Runtime struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Platform marks a serving platform that runs an engine (Dynamo, NIM):
	// its version is the platform's, not the engine's. The engine it runs,
	// when known, is a runtime claim of its own, without a version unless
	// the evidence states the engine's.
	Platform   bool       `json:"platform,omitempty"`
	Confidence Confidence `json:"confidence"`
	Evidence   Evidence   `json:"evidence"`
}

// Model is a model claim.
type Model struct {
	// Name is the model's identity: a hub id ("Qwen/Qwen3-8B"), a catalogue
	// name, or the name a model path states ("llama-3.1-405b-instruct" for
	// "/mnt/models/llama-3.1-405b-instruct/").
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Source is where the weights are read from, when the evidence says:
	// a storage URI ("hf://org/model", "s3://bucket/path", "pvc://claim/path")
	// or a local path. It is not part of the identity.
	Source string `json:"source,omitempty"`
	// ServedName is the name the server exposes the model under, when it
	// differs from Name (vLLM's --served-model-name).
	ServedName string `json:"servedName,omitempty"`
	// Task is what the model is served for, when the evidence says so
	// (vLLM's --task "embed", a CRD field): the model card's task.
	Task string `json:"task,omitempty"`
	// Architecture is the model's architecture when declared
	// ("Qwen3ForCausalLM"): the model card's modelArchitecture.
	Architecture string `json:"architecture,omitempty"`
	// BaseModel names the base model a LoRA adapter applies to, when
	// declared (AIBrix's ModelAdapter baseModel): the adapter depends on it
	// in the document's graph.
	BaseModel string `json:"baseModel,omitempty"`
	// Quantization is the quantisation the server applies, when declared
	// ("awq" from --quantization awq).
	Quantization string     `json:"quantization,omitempty"`
	Confidence   Confidence `json:"confidence"`
	Evidence     Evidence   `json:"evidence"`
}

// Data is model storage: a volume mounted at a model path, a cache, a PVC.
type Data struct {
	Name string `json:"name"`
	// Kind says what the storage is: "volume", "pvc", "hostPath", "nimcache", ...
	Kind       string     `json:"kind"`
	Confidence Confidence `json:"confidence"`
	Evidence   Evidence   `json:"evidence"`
}

// Framework purposes.
const (
	PurposeEvaluation = "evaluation"
	PurposeTraining   = "training"
)

// Framework is an evaluation or training framework claim.
type Framework struct {
	Name string `json:"name"`
	// Purpose is PurposeEvaluation or PurposeTraining.
	Purpose    string     `json:"purpose"`
	Confidence Confidence `json:"confidence"`
	Evidence   Evidence   `json:"evidence"`
}

// Accelerator is an accelerator a container requests, or a dynamic resource
// claim of the pod.
type Accelerator struct {
	// Resource is the extended resource name ("nvidia.com/gpu") or, for a
	// dynamic resource claim, "resourceclaim".
	Resource string `json:"resource"`
	// Quantity is the amount requested or limited, as written ("1", "8");
	// empty for a claim.
	Quantity string   `json:"quantity,omitempty"`
	Evidence Evidence `json:"evidence"`
}

// Property is a kind-specific fact recorded on the document.
type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Redaction records a value that was withheld or masked.
type Redaction struct {
	// Locator is the field whose value was withheld or masked.
	Locator string `json:"locator"`
	// Reason is a short word: "secret-name", "url-credentials", "token".
	Reason string `json:"reason"`
}

// Merge appends other's findings to f.
func (f *Findings) Merge(other Findings) {
	f.Scrapers = append(f.Scrapers, other.Scrapers...)
	f.Containers = append(f.Containers, other.Containers...)
	f.Runtimes = append(f.Runtimes, other.Runtimes...)
	f.Models = append(f.Models, other.Models...)
	f.Data = append(f.Data, other.Data...)
	f.Frameworks = append(f.Frameworks, other.Frameworks...)
	f.Accelerators = append(f.Accelerators, other.Accelerators...)
	f.Properties = append(f.Properties, other.Properties...)
	f.Redactions = append(f.Redactions, other.Redactions...)
}

// Match says why a root is an AI workload: a runtime or a model claim at
// any confidence, an evaluation or training framework, model storage, or an
// accelerator, in that order of preference (the alphabetically first name
// within a kind, so that the order of the findings does not matter). ok is
// false when none holds: the root is "unmatched" and gets no AIBOM unless
// every root is reported.
func (f Findings) Match() (reason string, ok bool) {
	first := func(names []string) string {
		m := names[0]
		for _, n := range names[1:] {
			if n < m {
				m = n
			}
		}
		return m
	}
	switch {
	case len(f.Runtimes) > 0:
		names := make([]string, len(f.Runtimes))
		for i, r := range f.Runtimes {
			names[i] = r.Name
		}
		return "runtime:" + first(names), true
	case len(f.Models) > 0:
		return "model", true
	case len(f.Frameworks) > 0:
		names := make([]string, len(f.Frameworks))
		for i, x := range f.Frameworks {
			names[i] = x.Name
		}
		return "framework:" + first(names), true
	case len(f.Data) > 0:
		return "model-storage", true
	case len(f.Accelerators) > 0:
		names := make([]string, len(f.Accelerators))
		for i, a := range f.Accelerators {
			names[i] = a.Resource
		}
		return "accelerator:" + first(names), true
	}
	return "", false
}
