package podtemplate

import (
	"regexp"
	"strings"
)

// ParseImage splits an image reference into its normalised repository, its
// tag and its digest. The repository always carries a registry: a Docker Hub
// reference is normalised to "docker.io/<namespace>/<name>", with "library"
// added for official images, and "index.docker.io" or
// "registry-1.docker.io" rewritten to "docker.io"; the registry host is
// lower-cased. The tag and digest are empty when absent.
//
//	ParseImage("vllm/vllm-openai:v0.6.3") == ("docker.io/vllm/vllm-openai", "v0.6.3", "")
//	ParseImage("nginx@sha256:abc…")      == ("docker.io/library/nginx", "", "sha256:abc…")
//	ParseImage("nvcr.io/nim/meta/llama:1") == ("nvcr.io/nim/meta/llama", "1", "")
func ParseImage(ref string) (repository, tag, digest string) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", "", ""
	}
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	if i := strings.LastIndexByte(ref, ':'); i >= 0 && !strings.Contains(ref[i+1:], "/") {
		ref, tag = ref[:i], ref[i+1:]
	}
	if ref == "" {
		return "", tag, digest
	}
	domain, rest, found := strings.Cut(ref, "/")
	if !found || !(strings.ContainsAny(domain, ".:") || domain == "localhost" || domain != strings.ToLower(domain)) {
		domain, rest = "docker.io", ref
	}
	domain = strings.ToLower(domain)
	if domain == "index.docker.io" || domain == "registry-1.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	return domain + "/" + rest, tag, digest
}

// runtimePattern matches a normalised repository: exactly, or, when prefix is
// set, any repository below it.
type runtimePattern struct {
	runtime string
	repo    string
	prefix  bool
}

// runtimePatterns are deliberately conservative: they are anchored on the
// registry and namespace the project publishes under, so a mirror
// ("myregistry.example/vllm-openai") is a known false negative.
var runtimePatterns = []runtimePattern{
	{"vllm", "docker.io/vllm/", true},
	{"vllm", "docker.io/rocm/vllm", false},
	{"vllm", "docker.io/rocm/vllm-dev", false},
	{"vllm", "nvcr.io/nvidia/ai-dynamo/vllm-runtime", false},
	{"sglang", "docker.io/lmsysorg/sglang", false},
	{"sglang", "nvcr.io/nvidia/ai-dynamo/sglang-runtime", false},
	{"tensorrt-llm", "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime", false},
	{"triton", "nvcr.io/nvidia/tritonserver", false},
	{"nim", "nvcr.io/nim/", true},
	{"tgi", "docker.io/huggingface/text-generation-inference", false},
	{"tgi", "ghcr.io/huggingface/text-generation-inference", false},
	{"tei", "ghcr.io/huggingface/text-embeddings-inference", false},
	{"ollama", "docker.io/ollama/ollama", false},
	{"ray-serve", "docker.io/rayproject/ray", false},
	{"ray-serve", "docker.io/rayproject/ray-ml", false},
	{"llm-d", "ghcr.io/llm-d/", true},
	{"lmdeploy", "docker.io/openmmlab/lmdeploy", false},
	{"litellm", "ghcr.io/berriai/litellm", false},
	{"llama.cpp", "ghcr.io/ggml-org/llama.cpp", false},
	{"llama.cpp", "ghcr.io/ggerganov/llama.cpp", false},
}

// versionTag accepts tags that read as a version: digits with at least one
// dot, an optional leading "v" and an optional suffix ("24.08-py3",
// "0.6.3.post1", "2.9.0-py310-gpu").
var versionTag = regexp.MustCompile(`^v?[0-9]+(\.[0-9]+)+([.+_-][0-9A-Za-z][0-9A-Za-z.+_-]*)?$`)

// IsVersionTag reports whether an image tag reads as a version: digits with
// at least one dot, an optional leading "v" and an optional suffix ("1.12.0",
// "v0.6.3", "24.08-py3", "1.8.0-rtx"); not "latest", "main" or a digest.
// RuntimeFromImage versions a runtime by such a tag; adapters that name a
// runtime from a CRD field use it to do the same.
func IsVersionTag(tag string) bool { return versionTag.MatchString(tag) }

// RuntimeFromImage names the serving runtime an image reference runs, when
// its normalised repository (see ParseImage) is a known serving image. The
// version is the tag when the tag looks like a version ("v0.6.3", "1.12",
// "24.08-py3") and empty otherwise ("latest", "main", "nightly", a digest).
func RuntimeFromImage(image string) (name, version string, ok bool) {
	repo, tag, _ := ParseImage(image)
	if repo == "" {
		return "", "", false
	}
	for _, p := range runtimePatterns {
		if repo == p.repo || (p.prefix && strings.HasPrefix(repo, p.repo) && len(repo) > len(p.repo)) {
			if IsVersionTag(tag) {
				version = tag
			}
			return p.runtime, version, true
		}
	}
	return "", "", false
}
