// Package generic reads an object of a kind no adapter knows: the pod
// templates, pod specs and containers anywhere in its spec, through the
// shared pod-template scraper, each finding located at its exact field.
//
// The core uses it for generic roots (the topmost controller owner of a kind
// no adapter declares, and Pods nobody controls), and aibom scan for custom
// resources it has no adapter for.
package generic

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Bounds of the search for pod specs in an object of an unknown kind: a spec
// is attacker-shaped input.
const (
	// MaxDepth is the deepest map or list level searched below spec.
	MaxDepth = 12
	// MaxNodes is the most maps and lists visited in one object.
	MaxNodes = 20000
)

// Scrape reads obj, an object of any kind, as unstructured JSON. A Pod's
// spec is its pod spec; for every other kind, spec is searched, in a
// deterministic order (map keys sorted), for
//
//   - pod templates ({metadata, spec: {containers}}) and pod specs
//     ({containers}), read with the shared pod-template scraper
//     (podtemplate.ScrapeTemplate, podtemplate.ScrapePodSpec);
//   - containers outside a pod spec (a map with a string image and a name,
//     a command, args or env), read with podtemplate.ScrapeContainer and
//     named by their name or, without one, by their key;
//   - fields whose key names a model (model, modelName, modelID, modelId,
//     model_name, modelURI, modelPath, baseModel, ...; the name, id or
//     URI fields of a "model" object; a storageUri that is not below a
//     dataset), read as podtemplate.ModelFromValue reads a value: inferred,
//     source crd_field, located at the field; a servedModelName beside it is
//     the model's served name;
//   - env lists outside a container ({name, value} entries), read as a
//     container's env is.
//
// A kind a training operator names by its framework (a "TFJob", a
// "JAXJob", an "XGBoostJob", a "PaddleJob", an "MXJob", an "MPIJob", a
// "HorovodJob", a "PyTorchJob", a "MindSporeJob") implies that framework,
// inferred, located at "kind". An object with no such field gives empty
// findings, not an error. The search is bounded (MaxDepth, MaxNodes).
func Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	var out adapter.Findings
	if obj == nil || obj.Object == nil {
		return out, nil
	}
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return out, nil
	}
	if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Pod" {
		f, err := podtemplate.ScrapePodSpec(spec, "spec", podtemplate.Options{WorkloadAnnotations: obj.GetAnnotations()})
		if err != nil {
			return adapter.Findings{}, err
		}
		return f, nil
	}
	w := walker{annotations: obj.GetAnnotations()}
	if err := w.visit(spec, "spec", "spec", 0, false, &out); err != nil {
		return adapter.Findings{}, err
	}
	if len(w.scraped) == 0 && len(out.Models)+len(out.Data)+len(out.Runtimes) > 0 {
		// Model fields outside any pod template: the findings still name the
		// scraper that read them.
		out.Scrapers = append(out.Scrapers, podtemplate.Scraper())
	}
	podtemplate.JoinServedNames(out.Models)
	if fw, ok := KindFramework(obj.GetKind()); ok && (len(out.Containers) > 0 || len(out.Frameworks) > 0) {
		if !hasFramework(out.Frameworks, fw) {
			out.Frameworks = append(out.Frameworks, adapter.Framework{Name: fw, Purpose: adapter.PurposeTraining, Confidence: adapter.Inferred,
				Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "kind"}})
		}
	}
	return out, nil
}

// kindFrameworks map the framework word a training operator puts in its
// kinds ("TFJob", "JAXJob") to the framework.
var kindFrameworks = map[string]string{
	"tf": adapter.FrameworkTensorFlow, "tensorflow": adapter.FrameworkTensorFlow,
	"jax": adapter.FrameworkJAX, "xgboost": adapter.FrameworkXGBoost, "xgb": adapter.FrameworkXGBoost,
	"paddle": adapter.FrameworkPaddlePaddle, "paddlepaddle": adapter.FrameworkPaddlePaddle,
	"mx": adapter.FrameworkMXNet, "mxnet": adapter.FrameworkMXNet, "mindspore": adapter.FrameworkMindSpore,
	"horovod": adapter.FrameworkHorovod, "mpi": adapter.FrameworkMPI, "pytorch": adapter.FrameworkPyTorch,
	"torch": adapter.FrameworkPyTorch,
}

// KindFramework names the framework a training kind states: "<Framework>Job"
// or "<Framework>TrainingJob" ("TFJob", "JAXJob", "XGBoostJob", "MPIJob"),
// case aside.
func KindFramework(kind string) (string, bool) {
	k := strings.ToLower(kind)
	for _, suffix := range []string{"trainingjob", "job"} {
		if w, ok := strings.CutSuffix(k, suffix); ok && w != "" {
			fw, ok := kindFrameworks[w]
			return fw, ok
		}
	}
	return "", false
}

func hasFramework(list []adapter.Framework, name string) bool {
	for _, f := range list {
		if f.Name == name {
			return true
		}
	}
	return false
}

type walker struct {
	annotations map[string]string
	nodes       int
	// scraped counts the pod templates, pod specs and containers read.
	scraped []string
	// modelObjects are the paths of the objects read as a model object,
	// whose fields are not read again.
	modelObjects map[string]bool
}

// modelKeys are the keys (lower-cased, without "-", "_" and ".") whose
// string value names a model.
var modelKeys = map[string]bool{
	"model": true, "modelname": true, "modelid": true, "modeluri": true, "modelurl": true, "modelpath": true,
	"modelsource": true, "modelnameorpath": true, "modelrepo": true, "modelrepoid": true, "basemodel": true,
	"basemodelname": true, "hfmodel": true, "hfmodelid": true, "huggingfacemodel": true, "pretrainedmodel": true,
	"pretrainedmodelnameorpath": true, "llmmodel": true, "modelref": true,
}

// modelObjectFields are the fields of a "model" object naming the model, in
// order of preference; modelURIFields say where it is read from.
var (
	modelObjectFields = []string{"name", "id", "modelName", "modelId", "modelID", "repo", "repoId"}
	modelURIFields    = []string{"uri", "storageUri", "storageURI", "url", "path", "source"}
)

// servedKeys name the model as a server exposes it.
var servedKeys = map[string]bool{"servedmodelname": true, "servedname": true}

func normKey(k string) string {
	return strings.NewReplacer("-", "", "_", "", ".", "").Replace(strings.ToLower(k))
}

func (w *walker) visit(v any, path, key string, depth int, dataset bool, out *adapter.Findings) error {
	if depth > MaxDepth {
		return nil
	}
	w.nodes++
	if w.nodes > MaxNodes {
		return fmt.Errorf("%s: more than %d fields searched for pod templates", path, MaxNodes)
	}
	switch t := v.(type) {
	case map[string]any:
		if isPodSpec(t) {
			f, err := podtemplate.ScrapePodSpec(t, path, podtemplate.Options{WorkloadAnnotations: w.take()})
			if err != nil {
				return err
			}
			w.scraped = append(w.scraped, path)
			podtemplate.MergeFindings(out, f)
			return nil
		}
		if ps, ok := t["spec"].(map[string]any); ok && isPodSpec(ps) {
			if _, isMeta := t["metadata"]; isMeta || len(t) == 1 {
				f, err := podtemplate.ScrapeTemplate(t, path, podtemplate.Options{WorkloadAnnotations: w.take()})
				if err != nil {
					return err
				}
				w.scraped = append(w.scraped, path)
				podtemplate.MergeFindings(out, f)
				return nil
			}
		}
		skip := map[string]bool{}
		if isContainer(t) {
			name, _ := t["name"].(string)
			if name == "" {
				name = key
			}
			c := map[string]any{"name": name}
			for _, k := range []string{"image", "command", "args", "env", "volumeMounts", "resources"} {
				if x, ok := t[k]; ok {
					c[k] = x
					skip[k] = true
				}
			}
			f, err := podtemplate.ScrapeContainer(c, path, podtemplate.ContainerOptions{})
			if err != nil {
				return err
			}
			if len(w.scraped) == 0 {
				out.Scrapers = append(out.Scrapers, podtemplate.Scraper())
				w.addAnnotationModels(out)
			}
			w.scraped = append(w.scraped, path)
			podtemplate.MergeFindings(out, f)
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !hardwareKey(key) && !w.modelObjects[path] {
			w.modelFields(t, keys, path, dataset, skip, out)
		}
		for _, k := range keys {
			if skip[k] {
				continue
			}
			if k == "env" {
				if list, ok := t[k].([]any); ok {
					envModels(list, joinPath(path, k), out)
					continue
				}
			}
			if selectorKeys[k] {
				continue // labels and selectors name no model
			}
			if err := w.visit(t[k], joinPath(path, k), k, depth+1, dataset || strings.Contains(strings.ToLower(k), "dataset"), out); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range t {
			if err := w.visit(e, fmt.Sprintf("%s[%d]", path, i), key, depth+1, dataset, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// take returns the workload annotations for the first template read, so
// that its annotation models are recorded once.
func (w *walker) take() map[string]string {
	if len(w.scraped) > 0 {
		return nil
	}
	return w.annotations
}

// addAnnotationModels records the workload's annotation models (for a
// first read that is a bare container).
func (w *walker) addAnnotationModels(out *adapter.Findings) {
	models, reds := podtemplate.ModelsFromAnnotations(w.annotations, "metadata.annotations", adapter.SourceWorkloadAnnotation)
	out.Models = append(out.Models, models...)
	out.Redactions = append(out.Redactions, reds...)
}

// selectorKeys hold labels, annotations and selectors: their keys and
// values are not model fields.
var selectorKeys = map[string]bool{"labels": true, "annotations": true, "nodeSelector": true, "selector": true, "matchLabels": true}

// hardwareKey reports whether an object's key says it describes hardware
// (a GPU's "model: A100"), whose model field names no ML model.
func hardwareKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"gpu", "accelerator", "device", "hardware", "node", "cpu", "tpu", "machine", "instance"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// modelFields reads the fields of m whose key names a model.
func (w *walker) modelFields(m map[string]any, keys []string, path string, dataset bool, skip map[string]bool, out *adapter.Findings) {
	served, servedLoc := "", ""
	for _, k := range keys {
		if s, ok := m[k].(string); ok && servedKeys[normKey(k)] && !podtemplate.IsPlaceholder(s) {
			served, servedLoc = s, joinPath(path, k)
		}
	}
	recorded := false
	for _, k := range keys {
		if skip[k] {
			continue
		}
		nk := normKey(k)
		loc := joinPath(path, k)
		switch val := m[k].(type) {
		case string:
			switch {
			case modelKeys[nk]:
				if podtemplate.ModelFromValue(val, adapter.Inferred, adapter.SourceCRDField, loc, served, out) {
					recorded = true
				}
			case nk == "storageuri" && !dataset:
				if podtemplate.ModelFromValue(val, adapter.Inferred, adapter.SourceCRDField, loc, served, out) {
					recorded = true
				}
			case nk == "storageuri" && dataset && !podtemplate.IsPlaceholder(val):
				out.Data = append(out.Data, adapter.Data{Name: podtemplate.RedactInto(podtemplate.DatasetName(val), loc, out), Kind: podtemplate.DataKindDataset,
					Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: loc}})
			}
		case map[string]any:
			if !modelKeys[nk] || dataset {
				continue
			}
			if w.modelObjects == nil {
				w.modelObjects = map[string]bool{}
			}
			w.modelObjects[loc] = true
			if w.modelObject(val, loc, served, out) {
				recorded = true
			}
		}
	}
	if served != "" && !recorded && len(out.Models) == 0 {
		podtemplate.ModelFromValue(served, adapter.Inferred, adapter.SourceCRDField, servedLoc, "", out)
	}
}

// modelObject reads a "model" object: its name (or id) as the model, its
// URI as the model's source; with no name, the URI names it.
func (w *walker) modelObject(m map[string]any, path, served string, out *adapter.Findings) bool {
	uri, uriLoc := "", ""
	for _, k := range modelURIFields {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			uri, uriLoc = s, joinPath(path, k)
			break
		}
	}
	for _, k := range modelObjectFields {
		s, ok := m[k].(string)
		if !ok || strings.TrimSpace(s) == "" {
			continue
		}
		loc := joinPath(path, k)
		n := len(out.Models)
		if !podtemplate.ModelFromValue(s, adapter.Inferred, adapter.SourceCRDField, loc, served, out) {
			continue
		}
		if uri != "" && out.Models[n].Source == "" && !podtemplate.IsPlaceholder(uri) {
			out.Models[n].Source = podtemplate.RedactInto(uri, uriLoc, out)
		}
		return true
	}
	if uri != "" {
		return podtemplate.ModelFromValue(uri, adapter.Inferred, adapter.SourceCRDField, uriLoc, served, out)
	}
	return false
}

// envModels reads an env list outside a container as a container's env is
// read: the literal values of model env vars, secret-like names skipped.
func envModels(list []any, path string, out *adapter.Findings) {
	for i, raw := range list {
		e, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		name, _ := e["name"].(string)
		value, _ := e["value"].(string)
		if name == "" || value == "" || podtemplate.IsSecretName(name) {
			continue
		}
		safe, _ := podtemplate.Redact(name)
		podtemplate.ModelFromEnv(name, value, fmt.Sprintf("%s[%d](%s)", path, i, safe), out)
	}
}

// isContainer reports whether m is shaped like a container outside a pod
// spec: a string image, and a name, a command, args or env.
func isContainer(m map[string]any) bool {
	img, ok := m["image"].(string)
	if !ok || strings.TrimSpace(img) == "" {
		return false
	}
	if _, ok := m["containers"]; ok {
		return false
	}
	for _, k := range []string{"name", "command", "args", "env"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// isPodSpec reports whether m is shaped like a pod spec: a list of
// containers, each a map with an image.
func isPodSpec(m map[string]any) bool {
	list, ok := m["containers"].([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, c := range list {
		cm, ok := c.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := cm["image"].(string); !ok {
			return false
		}
	}
	return true
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + key + "]"
	}
	return path + "." + key
}
