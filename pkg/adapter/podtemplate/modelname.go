package podtemplate

import (
	"regexp"
	"strings"
)

// modelRef is a model value read from a flag, an env var or a script,
// split into the model's identity and the location it is read from.
type modelRef struct {
	// name is the model's identity ("Qwen/Qwen3-8B", "llama-3.1-405b"),
	// empty when the value is a location that names no model ("/models").
	name    string
	version string
	// source is the location when the value is one (a storage URI or a
	// path), empty for a plain model id.
	source string
}

// genericDirs are directory names that say where models live, not which
// model: a path ending in one of them names no model.
var genericDirs = map[string]bool{
	"models": true, "model": true, "weights": true, "data": true, "cache": true,
	"checkpoints": true, "checkpoint": true, "ckpt": true, "mnt": true, "workspace": true,
	"hf_cache": true, "huggingface": true, "hub": true, "snapshots": true,
	"model-cache": true, "models-cache": true, "model_cache": true, "gcs": true,
	"root": true, "tmp": true, "output": true, "outputs": true, "pretrained": true,
	"local": true, "latest": true, "main": true, "home": true, "opt": true,
	"persistent-storage": true, "storage": true, "volume": true, "artifacts": true,
	"llm": true, "base": true, "current": true,
}

// modelFileExts are weight file extensions stripped from a name.
var modelFileExts = []string{".gguf", ".safetensors", ".bin", ".onnx", ".pt", ".pth", ".mar", ".tflite", ".engine", ".ggml", ".nemo"}

// storageSchemes are URI schemes of model locations.
var storageSchemes = []string{"hf", "huggingface", "s3", "gs", "gcs", "az", "abfs", "abfss", "wasbs", "oci", "pvc", "nfs", "http", "https", "file", "modelscope", "ms", "ollama", "ngc"}

var (
	// placeholderWord: an all-capitals identifier with an underscore
	// ("V_MODEL_PATH", "BUCKET_NAME"), a template's stand-in.
	placeholderWord = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)
	// hubID is "<org>/<name>", the Hugging Face form.
	hubID = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}._-]*/[\p{L}\p{N}][\p{L}\p{N}._-]*$`)
	// catalogID is "<org>/<team>/<name>", NGC's form.
	catalogID = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}._-]*/[\p{L}\p{N}][\p{L}\p{N}._-]*/[\p{L}\p{N}][\p{L}\p{N}._-]*$`)
	// nameTag is "<name>:<tag>" (Ollama "mistral:latest", a checkpoint's
	// "Llama3.1-405B-Instruct:bf16-mp16").
	nameTag = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._/-]*):([\p{L}\p{N}][\p{L}\p{N}._-]*)$`)
	// plainName is a bare model name ("bert", "phi-2", "gemma-7b").
	plainName = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}._-]*$`)
)

// placeholderValues are stand-ins that name no model.
var placeholderValues = map[string]bool{
	"change-me": true, "your-model": true, "your_model": true, "my-model": true, "model-name": true,
	"model_name": true, "model-id": true, "model_id": true, "placeholder": true, "todo": true,
	"none": true, "null": true, "nil": true, "true": true, "false": true, "auto": true,
	"default": true, "yes": true, "no": true, "local": true, "all": true,
}

// IsPlaceholder reports whether a value is a template's stand-in rather than
// a real value: "<image>", "{{ .Values.model }}", "V_MODEL_PATH",
// "replaced-by-kustomize", or a value still holding a variable ("$MODEL").
func IsPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || strings.ContainsAny(v, "<>$") || strings.Contains(v, "{{") || strings.Contains(v, "}}") {
		return true
	}
	if placeholderWord.MatchString(v) || placeholderValues[strings.ToLower(v)] {
		return true
	}
	// A stand-in word as one of its parts: "dummy-model-name",
	// "replaced-by-kustomize", "changeme", "model_placeholder".
	for _, part := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '/' }) {
		if placeholderParts[part] {
			return true
		}
	}
	return false
}

// placeholderParts are words a template puts where a value will go.
var placeholderParts = map[string]bool{
	"dummy": true, "placeholder": true, "changeme": true, "replaced": true, "replaceme": true, "todo": true, "tbd": true, "xxx": true,
	"your": true, "yourmodel": true, "insert": true,
}

// parseModelValue reads a model value. ok is false for a placeholder, a
// number, or a value that is neither a model id nor a location.
func parseModelValue(v string) (modelRef, bool) {
	v = strings.Trim(strings.TrimSpace(v), `"'`)
	if IsPlaceholder(v) || isNumber(v) {
		return modelRef{}, false
	}
	// "hf:org/model" (DeepSparse, SparseML) is "hf://org/model".
	if rest, ok := strings.CutPrefix(v, "hf:"); ok && !strings.HasPrefix(rest, "//") {
		v = "hf://" + rest
	}
	if scheme, rest, ok := strings.Cut(v, "://"); ok {
		if !knownScheme(scheme) {
			return modelRef{}, false
		}
		ref := modelRef{source: v}
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i] // a query or fragment is not part of the name
		}
		rest = strings.TrimRight(rest, "/")
		switch strings.ToLower(scheme) {
		case "hf", "huggingface", "modelscope", "ms":
			ref.name = rest
			if n, rev, ok := strings.Cut(rest, "@"); ok {
				ref.name, ref.version = n, rev
			}
		case "ollama":
			ref.name = rest
		case "ngc":
			ref.name = rest
			if n, ver, ok := strings.Cut(rest, ":"); ok {
				ref.name, ref.version = n, ver
			}
		case "http", "https":
			u := rest
			if host, p, ok := strings.Cut(u, "/"); ok && (host == "huggingface.co" || host == "www.huggingface.co") && hubID.MatchString(p) {
				ref.name = p
			} else {
				ref.name = nameOfPath(p)
			}
		default:
			if _, p, ok := strings.Cut(rest, "/"); ok {
				ref.name = nameOfPath(p)
			}
		}
		return ref, true
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "../") {
		return modelRef{source: v, name: nameOfPath(v)}, true
	}
	if hubID.MatchString(v) || catalogID.MatchString(v) {
		return modelRef{name: v}, true
	}
	if n, tag, ok := strings.Cut(v, ":"); ok && (hubID.MatchString(n) || catalogID.MatchString(n)) && plainName.MatchString(tag) {
		return modelRef{name: n, version: tag}, true
	}
	if m := nameTag.FindStringSubmatch(v); m != nil {
		return modelRef{name: m[1], version: m[2]}, true
	}
	if plainName.MatchString(v) && !strings.HasPrefix(v, "-") {
		return modelRef{name: v}, true
	}
	// What a model flag or env var holds is a model name unless it is
	// clearly not one: a name with other characters is kept as written.
	if !strings.ContainsAny(v, " \t\r\n") && !strings.HasPrefix(v, "-") && len(v) <= 512 {
		return modelRef{name: v}, true
	}
	return modelRef{}, false
}

func knownScheme(s string) bool {
	s = strings.ToLower(s)
	for _, k := range storageSchemes {
		if s == k {
			return true
		}
	}
	return false
}

// nameOfPath is the model name a path states: its last segment with a
// weight file extension removed, unless that segment is a generic directory
// name ("/models") or a Hugging Face cache entry ("models--org--name", which
// gives "org/name").
func nameOfPath(p string) string {
	p = strings.TrimRight(p, "/")
	if p == "" || p == "." {
		return ""
	}
	segs := strings.Split(p, "/")
	// Hugging Face cache layout: .../models--<org>--<name>/snapshots/<rev>.
	for _, s := range segs {
		if rest, ok := strings.CutPrefix(s, "models--"); ok {
			return strings.Replace(rest, "--", "/", 1)
		}
	}
	// A trailing segment that names a build of the model rather than the
	// model ("s3://bucket/DeepSeek-V3-W8A8/vllm-ascend": the runtime it is
	// prepared for; ".../Llama-3-70B/fp8"; a revision "1") gives way to
	// the one before it, the name a reader would give.
	for len(segs) > 1 && isVariantDir(segs[len(segs)-1]) {
		segs = segs[:len(segs)-1]
	}
	base := segs[len(segs)-1]
	if base == "" {
		return ""
	}
	for _, ext := range modelFileExts {
		if strings.HasSuffix(strings.ToLower(base), ext) && len(base) > len(ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	if genericDirs[strings.ToLower(base)] || !plainName.MatchString(base) || IsPlaceholder(base) {
		return ""
	}
	return base
}

func isNumber(v string) bool {
	if !strings.ContainsAny(v, "0123456789") {
		return false
	}
	for _, r := range v {
		if (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' && r != 'e' {
			return false
		}
	}
	return true
}

// variantDirs are directory names that say which build of a model a
// directory holds (a precision, a format), not which model.
var variantDirs = map[string]bool{
	"fp8": true, "fp16": true, "bf16": true, "fp32": true, "int4": true, "int8": true, "awq": true, "gptq": true,
	"safetensors": true, "gguf": true, "onnx": true, "original": true, "engine": true, "engines": true,
}

// isVariantDir reports whether a path segment names a build of the model
// before it: a variantDirs name, a number (a Triton version directory), or a
// runtime's name alone or first ("vllm", "vllm-ascend", "trtllm_engine").
func isVariantDir(seg string) bool {
	l := strings.ToLower(seg)
	if variantDirs[l] || isNumber(l) && !strings.ContainsAny(l, ".") {
		return true
	}
	first := strings.FieldsFunc(l, func(r rune) bool { return r == '-' || r == '_' })
	if len(first) == 0 {
		return false
	}
	_, ok := runtimeFromName(first[0])
	return ok
}
