package podtemplate

import (
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// ModelEnvNames are the env vars whose literal value names a model (besides
// those ending in one of ModelEnvSuffixes). Read-only.
var ModelEnvNames = []string{
	"MODEL", "MODELS", "MODEL_ID", "MODEL_NAME", "MODEL_PATH", "MODEL_NAME_OR_PATH",
	"HF_MODEL_ID", "HF_MODEL", "BASE_MODEL", "LLM_MODEL", "SERVED_MODEL_NAME",
	"NIM_MODEL_NAME", "NIM_SERVED_MODEL_NAME", "MODEL_URI", "STORAGE_URI",
}

// ModelEnvSuffixes: an env var whose name ends in one of them
// ("YLLM_MODEL", "TRTLLM_MODEL_NAME", "OLLAMA_INFERENCE_MODEL",
// "LLAMA_ARG_MODEL") names a model too. Read-only.
var ModelEnvSuffixes = []string{"_MODEL", "_MODEL_ID", "_MODEL_NAME", "_MODEL_PATH", "_MODELS"}

// ModelMountPaths are the mount paths at or below which a volume is taken
// for model storage. Read-only.
var ModelMountPaths = []string{"/models", "/model", "/weights", "/checkpoints", "/hf_cache", "/root/.cache/huggingface"}

// ModelAnnotationPrefix is the prefix of annotations that declare a model.
//
// The convention: an annotation "model.aibom.dev/<anything>" (on the
// workload or on its pod template) declares one model; the part after the
// prefix is free (use it to tell several models apart, e.g.
// "model.aibom.dev/base" and "model.aibom.dev/adapter"). The value is the
// model name, optionally followed by "@<version>" (a revision, a tag, a
// commit), e.g. "meta-llama/Llama-3.1-8B-Instruct@main". The "@" is taken as a
// version separator only when the value holds no "://" and the version is
// made of letters, digits, ".", "_" and "-". Empty values are ignored, and
// keys whose suffix looks like a secret (IsSecretName) are not read.
const ModelAnnotationPrefix = "model.aibom.dev/"

// ngcModelPath is an NGC model registry path without its scheme:
// "<org>/<team>/<name>", optionally ":<version>".
var ngcModelPath = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*/[a-z0-9][a-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9._-]*(:[A-Za-z0-9][A-Za-z0-9._-]*)?$`)

var annotationVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// IsModelEnv reports whether an env var names a model: one of
// ModelEnvNames, or a name ending in one of ModelEnvSuffixes.
func IsModelEnv(name string) bool {
	n := strings.ToUpper(name)
	if contains(ModelEnvNames, n) {
		return true
	}
	for _, s := range ModelEnvSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// ModelFromEnv records the models the literal value of a model env var
// (IsModelEnv) names, located at loc: an id, a location with the name it
// states, or a comma-separated list (MODELS). Placeholders and values
// naming nothing are skipped. It reports whether a model was recorded.
func ModelFromEnv(name, value, loc string, f *adapter.Findings) bool {
	if !IsModelEnv(name) {
		return false
	}
	found := false
	for _, v := range strings.Split(value, ",") {
		if strings.EqualFold(name, "NIM_MODEL_NAME") && ngcModelPath.MatchString(strings.TrimSpace(v)) {
			// A NIM reads a bare "<org>/<team>/<name>[:<version>]" here
			// as a path in the NGC model registry.
			v = "ngc://" + strings.TrimSpace(v)
		}
		if addModelValue(f, v, adapter.Inferred, adapter.SourceEnvVar, loc, "") {
			found = true
		}
	}
	return found
}

// addModelValue records the model a value names (see parseModelValue),
// redacted, as a claim with the given confidence and evidence. A location
// that names no model becomes model storage instead. It reports whether a
// model was recorded.
func addModelValue(f *adapter.Findings, val string, conf adapter.Confidence, src adapter.Source, locator, served string) bool {
	ref, ok := parseModelValue(val)
	if !ok {
		return false
	}
	ev := adapter.Evidence{Source: src, Locator: locator}
	if ref.name == "" {
		if ref.source != "" {
			f.Data = append(f.Data, adapter.Data{
				Name: RedactInto(ref.source, locator, f), Kind: "location", Confidence: conf, Evidence: ev,
			})
		}
		return false
	}
	m := adapter.Model{Name: RedactInto(ref.name, locator, f), Version: ref.version, Confidence: conf, Evidence: ev}
	if ref.source != "" {
		m.Source = RedactInto(ref.source, locator, f)
	}
	if served != "" && served != m.Name {
		m.ServedName = RedactInto(served, locator, f)
	}
	f.Models = append(f.Models, m)
	return true
}

// IsModelPath reports whether a mount path is at or below one of
// ModelMountPaths, on a path boundary: "/models" and "/models/llama" match,
// "/models-shared" does not.
func IsModelPath(mountPath string) bool {
	if mountPath == "" {
		return false
	}
	p := path.Clean(mountPath)
	for _, m := range ModelMountPaths {
		if p == m || strings.HasPrefix(p, m+"/") {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ModelsFromAnnotations returns the models declared by annotations with
// ModelAnnotationPrefix (see its convention), sorted by key. prefix is the
// locator of the annotations map ("metadata.annotations" for the workload,
// "spec.template.metadata.annotations" for a pod template); src is
// adapter.SourceWorkloadAnnotation or adapter.SourcePodTemplateAnnotation.
func ModelsFromAnnotations(annotations map[string]string, prefix string, src adapter.Source) ([]adapter.Model, []adapter.Redaction) {
	var f adapter.Findings
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if strings.HasPrefix(k, ModelAnnotationPrefix) && len(k) > len(ModelAnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		key, _ := Redact(k) // a locator must not carry a secret either
		locator := prefix + "[" + key + "]"
		if IsSecretName(strings.TrimPrefix(k, ModelAnnotationPrefix)) {
			if annotations[k] != "" {
				f.Redactions = append(f.Redactions, adapter.Redaction{Locator: locator, Reason: ReasonSecretName})
			}
			continue
		}
		val := strings.TrimSpace(annotations[k])
		if val == "" {
			continue
		}
		val = RedactInto(val, locator, &f)
		name, version := val, ""
		if i := strings.LastIndexByte(val, '@'); i > 0 && !strings.Contains(val, "://") && annotationVersion.MatchString(val[i+1:]) {
			name, version = val[:i], val[i+1:]
		}
		f.Models = append(f.Models, adapter.Model{
			Name: name, Version: version, Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: src, Locator: locator},
		})
	}
	return f.Models, f.Redactions
}
