// Package nim is the adapter for the NVIDIA NIM operator's NIMService
// (apps.nvidia.com/v1alpha1), tracked. The operator builds the pods itself
// (a Deployment, a LeaderWorkerSet when multi-node, or a KServe
// InferenceService), so Scrape reads the NIMService spec, not a pod template.
//
// # Container and runtime
//
// The main container's image is spec.image.repository + ":" +
// spec.image.tag, as the operator joins it. The operator always joins with a
// colon, so a digest pin can only be written tag: "sha256:<hex>", which makes
// the invalid reference "<repository>:sha256:<hex>" (the kubelet refuses it).
// For such a tag (sha256 and 64 lower-case hex digits) the container is
// reported as "<repository>@sha256:<hex>", the reference the owner meant
// and the one that carries the digest, and the operator's join is kept in
// the property nim.image.operatorReference. An empty tag gives the
// repository alone.
//
// The container is named "<metadata.name>-ctr", and its PodNames are
// "<name>-ctr", "nim-leader" and "nim-worker": the operator names the
// container so in a Deployment and in the leader and worker pods of a
// multi-node LeaderWorkerSet. spec.command, spec.args and spec.env belong to
// it and are read with podtemplate.ScrapeContainer at the locator "spec", so
// models, redactions and secret handling are the pod template scraper's:
// locators read "spec.args[1](--model)", "spec.env[0](NIM_MODEL_NAME)".
//
// The NIMService kind declares the runtime: "nim", Declared, source
// crd_field at spec.image.repository, versioned by the tag when the tag reads
// as a version ("1.12.0", "1.8.0-rtx"). The image-pattern runtime the pod
// template scraper infers for the main container is dropped in its favour.
//
// spec.initContainers[] (Init) and spec.sidecarContainers[] are read with
// podtemplate.ScrapeContainer too, each at its own locator.
//
// # Model
//
// Models come, in order, from model annotations on the NIMService
// (metadata.annotations, declared, workload_annotation) and in spec.annotations
// (which the operator puts on its pods; declared, pod_template_annotation),
// then from the main container's args and command (declared for a model
// flag, inferred for "vllm serve <model>") and literal env values
// (NIM_MODEL_NAME, NIM_SERVED_MODEL_NAME, ...; inferred; never valueFrom, and
// secret-like names are never read). When args and env name no model (a
// served-model name alone, --served-model-name or NIM_SERVED_MODEL_NAME, is
// an alias and does not count), the image implies one: nvcr.io/nim/<org>/<name> gives "<org>/<name>", Inferred,
// source image_pattern, at spec.image.repository; the multi-LLM image
// nvcr.io/nim/nvidia/llm-nim implies none (its model is NIM_MODEL_NAME).
// Init and sidecar container models follow.
//
// # Storage
//
// spec.storage is model storage, each as Data, Declared, source crd_field:
// nimCache.name (kind "nimcache"; the NIMCache is referenced by name, with no
// ownerReference), pvc (kind "pvc", named pvc.name or, when pvc.create is
// true and the name empty, "<name>-pvc" as the operator names it), hostPath
// (kind "hostPath") and emptyDir (kind "emptyDir", named "emptyDir"). All
// that are written are reported, in that order.
//
// # Properties
//
// When set: nim.image.operatorReference (see above), nim.replicas,
// nim.storage.nimCache.{name,profile}, nim.storage.pvc.{name,create,size,
// storageClass,volumeAccessMode,subPath}, nim.storage.hostPath,
// nim.storage.emptyDir.sizeLimit (or nim.storage.emptyDir "true" without a
// limit), nim.storage.readOnly, nim.multiNode.backendType (the operator's
// default "lws" when multiNode is set without it),
// nim.multiNode.parallelism.{pipeline,tensor}, nim.multiNode.{size,gpusPerPod}
// (older operators), and always nim.inferencePlatform (the operator's default
// "standalone" when unset). String values go through podtemplate.Redact.
//
// spec.authSecret names a Secret: it is never read or reported.
//
// # Malformed input
//
// An absent or null field is skipped. An object or list the scraper walks
// (spec, spec.image, spec.storage and its parts, spec.multiNode, the
// container lists and their elements) or a string it reports
// (repository, tag, nimCache.name, pvc.name, hostPath) of the wrong type is an
// error naming its locator. Other scalars of the wrong type are skipped.
package nim

import (
	"context"
	"fmt"
	"regexp"
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
const Name = "nim"

// Group is the NIM operator's API group.
const Group = "apps.nvidia.com"

// Scraper identity recorded in adapter.Findings.Scrapers.
const (
	ScraperName    = "nim"
	ScraperVersion = "0.1.0"
	ScraperMethod  = "crd-spec"
)

// Scraper returns the entry Scrape puts in adapter.Findings.Scrapers.
func Scraper() adapter.Scraper {
	return adapter.Scraper{Name: ScraperName, Version: ScraperVersion, Method: ScraperMethod}
}

// RuntimeName is the runtime a NIMService declares.
const RuntimeName = "nim"

// MultiLLMRepository is the multi-LLM NIM image, whose model is chosen by
// NIM_MODEL_NAME rather than implied by the image.
const MultiLLMRepository = "nvcr.io/nim/nvidia/llm-nim"

// Container names the operator gives the NIM container in a multi-node
// LeaderWorkerSet.
const (
	LeaderContainerName = "nim-leader"
	WorkerContainerName = "nim-worker"
)

// Properties recorded by Scrape (see the package documentation).
const (
	PropertyOperatorReference = "nim.image.operatorReference"
	PropertyReplicas          = "nim.replicas"
	PropertyInferencePlatform = "nim.inferencePlatform"
	PropertyStoragePrefix     = "nim.storage."
	PropertyMultiNodePrefix   = "nim.multiNode."
)

// DefaultInferencePlatform is the operator's default spec.inferencePlatform.
const DefaultInferencePlatform = "standalone"

// DefaultBackendType is the operator's default spec.multiNode.backendType.
const DefaultBackendType = "lws"

var kinds = []adapter.Kind{
	// The operator renders a NIMService as a Deployment (pods under its
	// ReplicaSets) or, multi-node, as a LeaderWorkerSet (pods under
	// StatefulSets).
	{Group: Group, Kind: "NIMService", Resource: "nimservices", Versions: []string{"v1alpha1"}, Role: adapter.RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}, {Group: "apps", Kind: "StatefulSet"}}},
}

// digestTag is a digest written as a tag.
var digestTag = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

type nimAdapter struct{}

// New returns the nim adapter.
func New() adapter.Adapter { return nimAdapter{} }

func (nimAdapter) Name() string { return Name }

func (nimAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

func (nimAdapter) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("nim: no object")
	}
	gvk := obj.GroupVersionKind()
	if gvk.Group != Group || gvk.Kind != "NIMService" || gvk.Version != "v1alpha1" {
		return adapter.Findings{}, fmt.Errorf("nim: %s is not a tracked kind of this adapter", gvk)
	}
	s := scraper{name: obj.GetName(), f: adapter.Findings{Scrapers: []adapter.Scraper{Scraper()}}}
	if err := s.scrape(obj); err != nil {
		return adapter.Findings{}, fmt.Errorf("nim: NIMService %s: %w", obj.GetName(), err)
	}
	return s.f, nil
}

// scraper collects the findings of one NIMService.
type scraper struct {
	name string
	f    adapter.Findings
}

func (s *scraper) scrape(obj *unstructured.Unstructured) error {
	models, reds := podtemplate.ModelsFromAnnotations(obj.GetAnnotations(), "metadata.annotations", adapter.SourceWorkloadAnnotation)
	s.f.Models = append(s.f.Models, models...)
	s.f.Redactions = append(s.f.Redactions, reds...)

	spec, err := fields.Object(obj.Object, "spec", "")
	if err != nil {
		return err
	}
	if err := s.podAnnotations(spec); err != nil {
		return err
	}
	if err := s.main(spec); err != nil {
		return err
	}
	for _, list := range []struct {
		field string
		init  bool
	}{{"initContainers", true}, {"sidecarContainers", false}} {
		items, err := fields.List(spec, list.field, "spec")
		if err != nil {
			return err
		}
		for i, raw := range items {
			path := fmt.Sprintf("spec.%s[%d]", list.field, i)
			c, ok := raw.(map[string]any)
			if !ok {
				return fields.TypeError(path, "object", raw)
			}
			cf, err := podtemplate.ScrapeContainer(c, path, podtemplate.ContainerOptions{Init: list.init})
			if err != nil {
				return err
			}
			s.f.Merge(cf)
		}
	}
	if n, ok := fields.Integer(spec["replicas"]); ok {
		s.prop(PropertyReplicas, strconv.FormatInt(n, 10))
	}
	if err := s.storage(spec); err != nil {
		return err
	}
	if err := s.multiNode(spec); err != nil {
		return err
	}
	platform, _ := spec["inferencePlatform"].(string)
	if platform == "" {
		platform = DefaultInferencePlatform
	}
	s.str(PropertyInferencePlatform, platform, "spec.inferencePlatform")
	return nil
}

// podAnnotations reads the model annotations of spec.annotations, which the
// operator puts on the pods it creates.
func (s *scraper) podAnnotations(spec map[string]any) error {
	ann, err := podtemplate.ModelAnnotations(spec, "spec")
	if err != nil || ann == nil {
		return err
	}
	models, reds := podtemplate.ModelsFromAnnotations(ann, "spec.annotations", adapter.SourcePodTemplateAnnotation)
	s.f.Models = append(s.f.Models, models...)
	s.f.Redactions = append(s.f.Redactions, reds...)
	return nil
}

// main reads the NIM container: image, runtime, command, args and env, and
// the model the image implies.
func (s *scraper) main(spec map[string]any) error {
	img, err := fields.Object(spec, "image", "spec")
	if err != nil {
		return err
	}
	repo, _, err := fields.String(img, "repository", "spec.image")
	if err != nil {
		return err
	}
	tag, err := imageTag(img)
	if err != nil {
		return err
	}
	image := repo
	switch {
	case tag == "":
	case digestTag.MatchString(tag):
		image = repo + "@" + tag
		s.prop(PropertyOperatorReference, repo+":"+tag)
	default:
		image = repo + ":" + tag
	}

	c := map[string]any{"image": image}
	if s.name != "" {
		c["name"] = s.name + "-ctr"
	}
	for _, k := range []string{"command", "args", "env"} {
		if v, ok := spec[k]; ok {
			c[k] = v
		}
	}
	cf, err := podtemplate.ScrapeContainer(c, "spec", podtemplate.ContainerOptions{})
	if err != nil {
		return err
	}
	for i := range cf.Containers {
		cf.Containers[i].PodNames = s.podNames()
	}
	version := ""
	if podtemplate.IsVersionTag(tag) {
		version = tag
	}
	cf.Runtimes = []adapter.Runtime{{
		Name: RuntimeName, Version: version, Platform: true, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.image.repository"},
	}}
	// The image is the operator's, read below from spec.image.repository;
	// the container scraper's reading of the joined reference is not kept.
	cf.Models = slices.DeleteFunc(cf.Models, func(m adapter.Model) bool {
		return m.Evidence.Source == adapter.SourceImagePattern && m.Evidence.Locator == "spec.image"
	})
	if !namesModel(cf.Models) {
		if model, ok := ModelFromImage(repo); ok {
			name := podtemplate.RedactInto(model, "spec.image.repository", &cf)
			cf.Models = append(cf.Models, adapter.Model{
				Name: name, Confidence: adapter.Inferred,
				Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: "spec.image.repository"},
			})
		}
	}
	s.f.Merge(cf)
	return nil
}

// namesModel reports whether a model claim of the main container names the
// model it serves. A served-model name (--served-model-name,
// NIM_SERVED_MODEL_NAME) is the alias clients use, not the model: alone, it
// does not replace the model the image implies.
func namesModel(models []adapter.Model) bool {
	for _, m := range models {
		loc := m.Evidence.Locator
		if !strings.HasSuffix(loc, "(--served-model-name)") && !strings.HasSuffix(loc, "(NIM_SERVED_MODEL_NAME)") {
			return true
		}
	}
	return false
}

// podNames lists the names the NIM container carries in pods.
func (s *scraper) podNames() []string {
	var names []string
	if s.name != "" {
		names = append(names, s.name+"-ctr")
	}
	return append(names, LeaderContainerName, WorkerContainerName)
}

// ModelFromImage returns the model a NIM image repository implies:
// "nvcr.io/nim/<org>/<name>" (after podtemplate.ParseImage normalisation;
// a tag or digest is ignored) gives "<org>/<name>". The multi-LLM image
// (MultiLLMRepository) and any other repository imply none.
func ModelFromImage(repository string) (string, bool) {
	repo, _, _ := podtemplate.ParseImage(repository)
	const prefix = "nvcr.io/nim/"
	if !strings.HasPrefix(repo, prefix) || repo == MultiLLMRepository {
		return "", false
	}
	org, name, ok := strings.Cut(strings.TrimPrefix(repo, prefix), "/")
	if !ok || org == "" || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	return org + "/" + name, true
}

// storage reads spec.storage.
func (s *scraper) storage(spec map[string]any) error {
	const path = "spec.storage"
	st, err := fields.Object(spec, "storage", "spec")
	if err != nil || st == nil {
		return err
	}

	cache, err := fields.Object(st, "nimCache", path)
	if err != nil {
		return err
	}
	name, _, err := fields.String(cache, "name", path+".nimCache")
	if err != nil {
		return err
	}
	if name != "" {
		s.data(name, "nimcache", path+".nimCache.name")
		s.str(PropertyStoragePrefix+"nimCache.name", name, path+".nimCache.name")
	}
	s.str(PropertyStoragePrefix+"nimCache.profile", cache["profile"], path+".nimCache.profile")

	pvc, err := fields.Object(st, "pvc", path)
	if err != nil {
		return err
	}
	pvcName, _, err := fields.String(pvc, "name", path+".pvc")
	if err != nil {
		return err
	}
	create, _ := pvc["create"].(bool)
	switch {
	case pvcName != "":
		s.data(pvcName, "pvc", path+".pvc.name")
	case create && s.name != "":
		s.data(s.name+"-pvc", "pvc", path+".pvc.create")
	}
	s.str(PropertyStoragePrefix+"pvc.name", pvcName, path+".pvc.name")
	if b, ok := pvc["create"].(bool); ok {
		s.prop(PropertyStoragePrefix+"pvc.create", strconv.FormatBool(b))
	}
	s.quantity(PropertyStoragePrefix+"pvc.size", pvc["size"], path+".pvc.size")
	for _, k := range []string{"storageClass", "volumeAccessMode", "subPath"} {
		s.str(PropertyStoragePrefix+"pvc."+k, pvc[k], path+".pvc."+k)
	}

	hostPath, _, err := fields.String(st, "hostPath", path)
	if err != nil {
		return err
	}
	if hostPath != "" {
		s.data(hostPath, "hostPath", path+".hostPath")
		s.str(PropertyStoragePrefix+"hostPath", hostPath, path+".hostPath")
	}

	if v, ok := st["emptyDir"]; ok && v != nil {
		ed, ok := v.(map[string]any)
		if !ok {
			return fields.TypeError(path+".emptyDir", "object", v)
		}
		s.data("emptyDir", "emptyDir", path+".emptyDir")
		if !s.quantity(PropertyStoragePrefix+"emptyDir.sizeLimit", ed["sizeLimit"], path+".emptyDir.sizeLimit") {
			s.prop(PropertyStoragePrefix+"emptyDir", "true")
		}
	}
	if b, ok := st["readOnly"].(bool); ok {
		s.prop(PropertyStoragePrefix+"readOnly", strconv.FormatBool(b))
	}
	return nil
}

// multiNode reads spec.multiNode.
func (s *scraper) multiNode(spec map[string]any) error {
	const path = "spec.multiNode"
	mn, err := fields.Object(spec, "multiNode", "spec")
	if err != nil || mn == nil {
		return err
	}
	backend, _ := mn["backendType"].(string)
	if backend == "" {
		backend = DefaultBackendType
	}
	s.str(PropertyMultiNodePrefix+"backendType", backend, path+".backendType")
	par, err := fields.Object(mn, "parallelism", path)
	if err != nil {
		return err
	}
	for _, k := range []string{"pipeline", "tensor"} {
		if n, ok := fields.Integer(par[k]); ok {
			s.prop(PropertyMultiNodePrefix+"parallelism."+k, strconv.FormatInt(n, 10))
		}
	}
	for _, k := range []string{"size", "gpusPerPod"} {
		if n, ok := fields.Integer(mn[k]); ok {
			s.prop(PropertyMultiNodePrefix+k, strconv.FormatInt(n, 10))
		}
	}
	return nil
}

// data records model storage declared by a CRD field, its name redacted.
func (s *scraper) data(name, kind, locator string) {
	s.f.Data = append(s.f.Data, adapter.Data{
		Name: s.redact(name, locator), Kind: kind, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: locator},
	})
}

// prop records a property whose value this scraper formatted.
func (s *scraper) prop(name, value string) {
	s.f.Properties = append(s.f.Properties, adapter.Property{Name: name, Value: value})
}

// str records a non-empty string value read from the spec, redacted; any
// other value is skipped.
func (s *scraper) str(name string, v any, locator string) {
	if str, ok := v.(string); ok && str != "" {
		s.prop(name, s.redact(str, locator))
	}
}

// quantity records a resource quantity written as a string or an integer,
// and says whether it did.
func (s *scraper) quantity(name string, v any, locator string) bool {
	if n, ok := fields.Integer(v); ok {
		s.prop(name, strconv.FormatInt(n, 10))
		return true
	}
	if str, ok := v.(string); ok && str != "" {
		s.prop(name, s.redact(str, locator))
		return true
	}
	return false
}

// redact masks secrets in a value and records each redaction at locator.
func (s *scraper) redact(v, locator string) string {
	return podtemplate.RedactInto(v, locator, &s.f)
}

// imageTag reads spec.image.tag. A number ("tag: 1.8" in YAML) is read as
// the text it was written as: the operator's own defaulting would not, but
// an offline manifest often has it, and the tag is still what the author
// meant. Any other non-string is an error.
func imageTag(img map[string]any) (string, error) {
	switch v := img["tag"].(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int:
		return strconv.Itoa(v), nil
	}
	tag, _, err := fields.String(img, "tag", "spec.image")
	return tag, err
}
