package podtemplate

import (
	"regexp"
	"strings"

	"github.com/aibom-dev/aibom/pkg/imageref"
)

// ParseImage splits an image reference into its normalised repository, its
// tag and its digest: imageref.Parse, the parser the document and the
// digest resolution use too. The repository always carries a registry: a
// Docker Hub reference is normalised to "docker.io/<namespace>/<name>",
// with "library" added for official images, and "index.docker.io" or
// "registry-1.docker.io" rewritten to "docker.io"; the registry host is
// lower-cased. The tag is empty when absent, the digest unless the
// reference is pinned by a well-formed sha256 digest.
//
//	ParseImage("vllm/vllm-openai:v0.6.3") == ("docker.io/vllm/vllm-openai", "v0.6.3", "")
//	ParseImage("nginx@sha256:<64 hex>")  == ("docker.io/library/nginx", "", "sha256:<64 hex>")
//	ParseImage("nvcr.io/nim/meta/llama:1") == ("nvcr.io/nim/meta/llama", "1", "")
func ParseImage(ref string) (repository, tag, digest string) {
	r := imageref.Parse(ref)
	return r.Repository, r.Tag, r.Digest
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

// ImageRuntime is what an image reference says it runs.
type ImageRuntime struct {
	// Name is the runtime or platform ("vllm", "dynamo", "nim").
	Name string
	// Version is the image tag when the image is the publisher's own and the
	// tag reads as a version; empty otherwise.
	Version string
	// Platform marks a serving platform image (Dynamo, NIM).
	Platform bool
	// Engine is the engine a platform image runs, when the image names it
	// ("vllm" for Dynamo's vllm-runtime); it has no version of its own.
	Engine string
}

// ReadImage names the runtime an image reference runs, from the catalogue:
// first the publishers' own repositories (nvcr.io/nvidia/ai-dynamo/*,
// nvcr.io/nim/*, vllm/*, lmsysorg/sglang, ...), then the last segment of the
// repository in any registry ("ghcr.io/acme/vllm", "vllm-openai-ubi9",
// "sglang-cpu", "huggingface-text-generation-inference-cu124..."). Images of
// clients, SDKs, benchmarks, test doubles and routers are not runtimes, nor
// is a placeholder ("<image>").
func ReadImage(image string) (ImageRuntime, bool) {
	if IsPlaceholder(image) {
		return ImageRuntime{}, false
	}
	repo, tag, _ := ParseImage(image)
	if repo == "" {
		return ImageRuntime{}, false
	}
	lowerTag := strings.ToLower(tag)
	for _, x := range tagExclusions {
		if strings.Contains(lowerTag, x) {
			return ImageRuntime{}, false
		}
	}
	for _, r := range imageRules {
		if repo == r.repo || (r.prefix && strings.HasPrefix(repo, r.repo) && len(repo) > len(r.repo)) {
			out := ImageRuntime{Name: r.runtime, Platform: r.platform, Engine: r.engine}
			if r.official && IsVersionTag(tag) {
				out.Version = tag
			}
			return out, true
		}
	}
	last := strings.ToLower(repo[strings.LastIndexByte(repo, '/')+1:])
	for _, x := range nameRuleExclusions {
		if hasPart(last, x) {
			return ImageRuntime{}, false
		}
	}
	for _, r := range nameRules {
		for _, n := range r.names {
			if last == n || strings.HasPrefix(last, n) && strings.ContainsRune("-_.", rune(last[len(n)])) {
				return ImageRuntime{Name: r.runtime}, true
			}
		}
	}
	return ImageRuntime{}, false
}

// hasPart reports whether word is one of the "-", "_" or "." separated
// parts of s.
func hasPart(s, word string) bool {
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if p == word {
			return true
		}
	}
	return false
}

// RuntimeFromImage names the serving runtime (or platform) an image
// reference runs (see ReadImage), with the tag as version when the image is
// the publisher's own and the tag reads as a version ("v0.6.3", "1.12",
// "24.08-py3"); empty otherwise ("latest", "main", a digest, a mirror).
func RuntimeFromImage(image string) (name, version string, ok bool) {
	r, ok := ReadImage(image)
	return r.Name, r.Version, ok
}

// ImageFramework is the machine-learning or evaluation framework an image
// holds.
type ImageFramework struct {
	// Name is a canonical framework name ("pytorch", "tensorflow").
	Name string
	// Purpose is adapter.PurposeTraining or adapter.PurposeEvaluation.
	Purpose string
}

// FrameworkFromImage names the framework an image holds when it names no
// serving runtime (ReadImage): the last segment of the repository, in any
// registry, equals a framework's image name or starts with it followed by
// "-", "_" or "." ("tensorflow/tensorflow", "nvcr.io/nvidia/pytorch",
// "paddlepaddle/paddle", "ghcr.io/acme/lm-eval"). Images of clients,
// operators, test doubles and the like (see ReadImage) hold none; neither
// does a placeholder.
func FrameworkFromImage(image string) (ImageFramework, bool) {
	if IsPlaceholder(image) {
		return ImageFramework{}, false
	}
	if _, ok := ReadImage(image); ok {
		return ImageFramework{}, false
	}
	repo, _, _ := ParseImage(image)
	if repo == "" {
		return ImageFramework{}, false
	}
	last := strings.ToLower(repo[strings.LastIndexByte(repo, '/')+1:])
	for _, x := range nameRuleExclusions {
		if hasPart(last, x) {
			return ImageFramework{}, false
		}
	}
	for _, r := range frameworkRules {
		for _, n := range r.names {
			if last == n || strings.HasPrefix(last, n) && len(last) > len(n) && strings.ContainsRune("-_.", rune(last[len(n)])) {
				return ImageFramework{Name: r.framework, Purpose: r.purpose}, true
			}
		}
	}
	return ImageFramework{}, false
}
