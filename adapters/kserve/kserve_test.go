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
// image, its args and GPU request are kept and no container is reported.
func TestInferenceServiceModel(t *testing.T) {
	f := scrape(t, fixture(t, "isvc-vllm-raw.yaml"))
	require.Empty(t, f.Containers, "an image-less model spec is not a container")
	require.Equal(t, []adapter.Runtime{
		{Name: "kserve", Platform: true, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.predictor"}},
		{Name: "vllm", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.predictor.model.modelFormat.name"}},
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
