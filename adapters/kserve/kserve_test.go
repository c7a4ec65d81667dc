package kserve

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

func fixture(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	u, err := conformance.DecodeObject(b)
	require.NoError(t, err)
	return u
}

func scrape(t testing.TB, u *unstructured.Unstructured) adapter.Findings {
	t.Helper()
	f, err := New().Scrape(context.Background(), u)
	require.NoError(t, err)
	return f
}

func prop(f adapter.Findings, name string) (string, bool) {
	for _, p := range f.Properties {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

func TestKinds(t *testing.T) {
	roles := map[string]adapter.Role{}
	for _, k := range New().Kinds() {
		require.NoError(t, k.Validate())
		roles[k.Kind+"."+k.Group] = k.Role
	}
	require.Equal(t, adapter.RoleTracked, roles["InferenceService.serving.kserve.io"])
	require.Equal(t, adapter.RoleTracked, roles["LLMInferenceService.serving.kserve.io"])
	for _, k := range []string{"Service", "Configuration", "Revision"} {
		require.Equal(t, adapter.RoleWalkOnly, roles[k+".serving.knative.dev"], k)
	}
}

// The predictor's model names the format, the runtime and the model; with no
// image, its args and GPU request are kept and no container of its own is
// reported; the ServingRuntime it names is not readable here, so the runtime
// is an unresolved claim.
func TestInferenceServiceModel(t *testing.T) {
	f := scrape(t, fixture(t, "isvc-vllm-raw.yaml"))
	require.Empty(t, f.Containers, "an image-less model spec is not a container")
	require.Equal(t, []adapter.Runtime{
		{Name: "kserve", Platform: true, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.predictor"}},
		{Name: "vllm", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.predictor.model.modelFormat.name"}},
		{Name: "vllm-runtime", Confidence: adapter.Unresolved, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.predictor.model.runtime"}},
	}, f.Runtimes)
	require.Equal(t, []adapter.Model{{
		Name: "meta-llama/Llama-3.1-8B-Instruct", Source: "hf://meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.predictor.model.storageUri"},
	}}, f.Models)
	require.Len(t, f.Accelerators, 1)
	require.Equal(t, "nvidia.com/gpu", f.Accelerators[0].Resource)
	v, ok := prop(f, PropertyPredictorPrefix+"runtime")
	require.True(t, ok)
	require.Equal(t, "vllm-runtime", v)
}

// With its ServingRuntime readable, the runtime's container is the
// predictor's, located in the runtime; the namespace runtime wins over a
// cluster runtime of the same name, and a runtime of another namespace is
// never read.
func TestServingRuntimeReference(t *testing.T) {
	isvc := fixture(t, "isvc-vllm-raw.yaml")
	sr := fixture(t, "references/servingruntime-vllm.yaml")
	csr := fixture(t, "references/clusterservingruntime-hf.yaml")
	csr.SetName("vllm-runtime")
	scrapeWith := func(objs ...*unstructured.Unstructured) (adapter.Findings, *conformance.ObjectResolver) {
		r := &conformance.ObjectResolver{Kinds: New().Kinds(), Namespace: isvc.GetNamespace(), Objects: objs}
		f, err := New().Scrape(adapter.WithResolver(context.Background(), r), isvc.DeepCopy())
		require.NoError(t, err)
		return f, r
	}

	f, r := scrapeWith(sr, csr)
	require.Len(t, f.Containers, 1)
	require.Equal(t, "vllm/vllm-openai:v0.9.2", f.Containers[0].Image)
	require.Equal(t, "ServingRuntime/vllm-runtime:spec.containers[0].image", f.Containers[0].Evidence.Locator)
	require.Equal(t, []adapter.Reference{{Group: Group, Kind: "ServingRuntime", Name: "vllm-runtime", Locator: "spec.predictor.model.runtime"}}, r.Lookups())
	v, _ := prop(f, PropertyPredictorPrefix+"runtimeKind")
	require.Equal(t, "ServingRuntime", v)

	// No namespace runtime: the cluster runtime of that name.
	f, r = scrapeWith(csr)
	require.Len(t, r.Lookups(), 2)
	require.Equal(t, "kserve/huggingfaceserver:v0.15.2", f.Containers[0].Image)
	require.Equal(t, "ClusterServingRuntime/vllm-runtime:spec.containers[0].image", f.Containers[0].Evidence.Locator)

	// A runtime of the same name in another namespace is not the root's.
	other := sr.DeepCopy()
	other.SetNamespace("tenant-b")
	f, _ = scrapeWith(other)
	require.Empty(t, f.Containers)
	require.Contains(t, f.Runtimes, adapter.Runtime{Name: "vllm-runtime", Confidence: adapter.Unresolved,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.predictor.model.runtime"}})
}

func TestStorageURI(t *testing.T) {
	for uri, want := range map[string]adapter.Model{
		"oci://quay.io/org/modelcar-catalog:granite-3.2-8b-instruct": {Name: "granite-3.2-8b-instruct"},
		"oci://registry.example.com/models/phi-4:1.2.0":              {Name: "phi-4", Version: "1.2.0"},
		"oci://registry.example.com/models/phi-4":                    {Name: "phi-4"},
		"s3://bucket/llm/flan-t5-small-caikit":                       {Name: "flan-t5-small-caikit"},
		"pvc://claim/models/llama-3-8b/":                             {Name: "llama-3-8b"},
	} {
		s := &scraper{}
		s.storageURI(uri, "spec.predictor.model.storageUri")
		require.Len(t, s.f.Models, 1, uri)
		require.Equal(t, want.Name, s.f.Models[0].Name, uri)
		require.Equal(t, want.Version, s.f.Models[0].Version, uri)
		require.Equal(t, uri, s.f.Models[0].Source, uri)
	}
	s := &scraper{}
	s.storageURI("s3://user:secretpass@bucket/models/iris", "loc")
	require.Len(t, s.f.Models, 1)
	require.NotContains(t, s.f.Models[0].Source, "secretpass")
	require.NotEmpty(t, s.f.Redactions)
}

func TestLLMInferenceService(t *testing.T) {
	f := scrape(t, fixture(t, "llmisvc-qwen.yaml"))
	require.Len(t, f.Models, 1)
	require.Equal(t, "Qwen/Qwen3-0.6B", f.Models[0].Name)
	require.Equal(t, "qwen3-small", f.Models[0].ServedName)
	groups := map[string]bool{}
	for _, c := range f.Containers {
		groups[c.Group] = true
	}
	require.Equal(t, map[string]bool{"main": true, "prefill": true}, groups)
}

func TestMalformed(t *testing.T) {
	for name, mutate := range map[string]func(u *unstructured.Unstructured){
		"predictor is a string": func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]any)["predictor"] = "x" },
		"storageUri is a number": func(u *unstructured.Unstructured) {
			u.Object["spec"].(map[string]any)["predictor"].(map[string]any)["model"].(map[string]any)["storageUri"] = int64(3)
		},
		"modelFormat is a list": func(u *unstructured.Unstructured) {
			u.Object["spec"].(map[string]any)["predictor"].(map[string]any)["model"].(map[string]any)["modelFormat"] = []any{}
		},
	} {
		u := fixture(t, "isvc-vllm-raw.yaml")
		mutate(u)
		_, err := New().Scrape(context.Background(), u)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "spec.predictor", name)
	}
}
