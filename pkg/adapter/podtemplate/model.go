package podtemplate

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// ModelFlags are the command-line flags whose value names a model. Read-only.
var ModelFlags = []string{
	"--model", "--model-id", "--model-path", "--model-repository",
	"--model-name", "--served-model-name",
}

// ModelEnvNames are the env vars whose literal value names a model. Read-only.
var ModelEnvNames = []string{"HF_MODEL_ID", "MODEL_NAME", "NIM_MODEL_NAME", "NIM_SERVED_MODEL_NAME"}

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

var annotationVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// IsModelFlag reports whether flag (e.g. "--model") is one of ModelFlags.
func IsModelFlag(flag string) bool { return contains(ModelFlags, flag) }

// IsModelEnv reports whether an env var name is one of ModelEnvNames.
func IsModelEnv(name string) bool { return contains(ModelEnvNames, name) }

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

// token is one word of a container's command line, with the list element it
// came from.
type token struct {
	text    string
	source  adapter.Source
	locator string // locator of the list element, e.g. "...args[3]"
}

// tokenize turns command and args into one word list. An element holding
// white space (a "sh -c" script) is split into words, each keeping the
// element's locator.
func tokenize(command, args []string, containerPath string) []token {
	var toks []token
	add := func(list []string, field string, src adapter.Source) {
		for i, el := range list {
			loc := fmt.Sprintf("%s.%s[%d]", containerPath, field, i)
			if !strings.ContainsAny(el, " \t\n\r") {
				toks = append(toks, token{el, src, loc})
				continue
			}
			for _, w := range strings.Fields(el) {
				w = strings.Trim(w, `"';`)
				if w != "" {
					toks = append(toks, token{w, src, loc})
				}
			}
		}
	}
	add(command, "command", adapter.SourceContainerCommand)
	add(args, "args", adapter.SourceContainerArg)
	return toks
}

var kubeVarRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// expand resolves Kubernetes "$(VAR)" references from env. It returns false
// when the result still holds a "$" (an unresolved or shell variable).
func expand(s string, env map[string]string) (string, bool) {
	if strings.Contains(s, "$(") {
		s = kubeVarRef.ReplaceAllStringFunc(s, func(ref string) string {
			if v, ok := env[ref[2:len(ref)-1]]; ok {
				return v
			}
			return ref
		})
	}
	return s, !strings.Contains(s, "$")
}

// ModelFromArgs finds model claims in a container's command and args.
// containerPath is the container's locator ("spec.template.spec.containers[0]").
// env holds the container's literal env values, used to expand "$(VAR)"
// references; it may be nil, and must not hold secret values.
//
// A model flag (ModelFlags), as "--flag value" or "--flag=value", gives a
// Declared model located at the element holding the flag, e.g.
// "spec.template.spec.containers[0].args[3](--model)". "vllm serve <model>"
// gives an Inferred model located at the element holding the model, with
// "(vllm serve)". Values are redacted (Redact); each redaction is returned.
func ModelFromArgs(command, args []string, env map[string]string, containerPath string) ([]adapter.Model, []adapter.Redaction) {
	var f adapter.Findings
	toks := tokenize(command, args, containerPath)
	for i, t := range toks {
		if strings.HasPrefix(t.text, "--") {
			flag, val, hasEq := strings.Cut(t.text, "=")
			if !IsModelFlag(flag) {
				continue
			}
			if !hasEq {
				if i+1 >= len(toks) || strings.HasPrefix(toks[i+1].text, "-") {
					continue
				}
				val = toks[i+1].text
			}
			addModel(&f, val, env, adapter.Declared, t.source, t.locator+"("+flag+")")
			continue
		}
		if path.Base(t.text) == "vllm" && i+2 < len(toks) && toks[i+1].text == "serve" &&
			!strings.HasPrefix(toks[i+2].text, "-") {
			v := toks[i+2]
			addModel(&f, v.text, env, adapter.Inferred, v.source, v.locator+"(vllm serve)")
		}
	}
	return f.Models, f.Redactions
}

// addModel records a model claim after expanding and redacting its name.
func addModel(f *adapter.Findings, val string, env map[string]string, conf adapter.Confidence, src adapter.Source, locator string) {
	val, ok := expand(strings.TrimSpace(val), env)
	if !ok || val == "" {
		return
	}
	name := RedactInto(val, locator, f)
	f.Models = append(f.Models, adapter.Model{
		Name: name, Confidence: conf,
		Evidence: adapter.Evidence{Source: src, Locator: locator},
	})
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
