package document

import (
	"slices"
	"strings"

	"github.com/package-url/packageurl-go"
)

// ociPURL is the package URL of an OCI image: pkg:oci/<name>, versioned by
// the digest when known, with the repository and the tag as qualifiers.
func ociPURL(repo, tag, digest string) string {
	name := strings.ToLower(repo[strings.LastIndexByte(repo, '/')+1:])
	q := packageurl.Qualifiers{{Key: "repository_url", Value: repo}}
	if tag != "" {
		q = append(q, packageurl.Qualifier{Key: "tag", Value: tag})
	}
	p := packageurl.NewPackageURL(packageurl.TypeOCI, "", name, digest, q, "").ToString()
	// The purl specification writes the digest's colon percent-encoded
	// ("@sha256%3A<hex>"), as its OCI examples do; the library leaves it.
	return strings.Replace(p, "@sha256:", "@sha256%3A", 1)
}

// runtimePackages maps a runtime or platform to the package it is published
// as, where one exists: its type, namespace and name.
var runtimePackages = map[string][3]string{
	"vllm":         {packageurl.TypePyPi, "", "vllm"},
	"sglang":       {packageurl.TypePyPi, "", "sglang"},
	"lmdeploy":     {packageurl.TypePyPi, "", "lmdeploy"},
	"tensorrt-llm": {packageurl.TypePyPi, "", "tensorrt-llm"},
	"ray-serve":    {packageurl.TypePyPi, "", "ray"},
	"torchserve":   {packageurl.TypePyPi, "", "torchserve"},
	"mlserver":     {packageurl.TypePyPi, "", "mlserver"},
	"deepsparse":   {packageurl.TypePyPi, "", "deepsparse"},
	"xinference":   {packageurl.TypePyPi, "", "xinference"},
	"dynamo":       {packageurl.TypePyPi, "", "ai-dynamo"},
	"tgi":          {packageurl.TypeGithub, "huggingface", "text-generation-inference"},
	"tei":          {packageurl.TypeGithub, "huggingface", "text-embeddings-inference"},
	"triton":       {packageurl.TypeGithub, "triton-inference-server", "server"},
	"ollama":       {packageurl.TypeGithub, "ollama", "ollama"},
	"llama.cpp":    {packageurl.TypeGithub, "ggml-org", "llama.cpp"},
	"localai":      {packageurl.TypeGithub, "mudler", "localai"},
	"litellm":      {packageurl.TypePyPi, "", "litellm"},
}

// runtimePURL is the package URL of a runtime: its ecosystem's where it has
// one (pkg:pypi/vllm, pkg:github/ollama/ollama), else pkg:generic/<name>;
// versioned only when the version is known.
func runtimePURL(name, version string) string {
	typ, ns, n := packageurl.TypeGeneric, "", strings.ToLower(name)
	if p, ok := runtimePackages[strings.ToLower(name)]; ok {
		typ, ns, n = p[0], p[1], p[2]
	}
	if typ == packageurl.TypePyPi {
		version = strings.TrimPrefix(version, "v")
	}
	return packageurl.NewPackageURL(typ, ns, n, version, nil, "").ToString()
}

// modelPURL is the package URL of a model: a model a NIM image names gets
// its NGC identity (pkg:generic/nvcr.io/nim/<org>/<name>); a model whose
// sources are all NGC model registry paths (ngc://<org>[/<team>]/<name>)
// is pkg:generic/ngc/<org>[/<team>]/<name>[@<version>]; a model named
// "<org>/<name>" whose sources, if any, are all Hugging Face (hf://) is a
// Hugging Face model (pkg:huggingface/<org>/<name>[@<revision>]). Other
// models have none: a purl is never guessed.
func modelPURL(name, version string, sources []string, nimImage bool) string {
	if p := ngcPURL(name, version, sources); p != "" {
		return p
	}
	org, n, ok := strings.Cut(name, "/")
	if !ok || org == "" || n == "" || strings.Contains(n, "/") || strings.ContainsAny(name, " :@") {
		return ""
	}
	if nimImage {
		return packageurl.NewPackageURL(packageurl.TypeGeneric, "nvcr.io/nim/"+org, n, version, nil, "").ToString()
	}
	for _, s := range sources {
		if !strings.HasPrefix(s, "hf://") && !strings.HasPrefix(s, "https://huggingface.co/") {
			return ""
		}
	}
	return packageurl.NewPackageURL(packageurl.TypeHuggingface, org, n, version, nil, "").ToString()
}

// ngcPURL is the purl of a model from the NGC registry: every source is
// ngc://, and the name is that path's "<org>/<name>" or
// "<org>/<team>/<name>"; "" otherwise.
func ngcPURL(name, version string, sources []string) string {
	if len(sources) == 0 || strings.ContainsAny(name, " :@") {
		return ""
	}
	for _, s := range sources {
		if !strings.HasPrefix(s, "ngc://") {
			return ""
		}
	}
	parts := strings.Split(name, "/")
	if len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
		return ""
	}
	ns := "ngc/" + strings.Join(parts[:len(parts)-1], "/")
	return packageurl.NewPackageURL(packageurl.TypeGeneric, ns, parts[len(parts)-1], version, nil, "").ToString()
}
