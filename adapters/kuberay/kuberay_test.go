package kuberay

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/core/digest"
	"github.com/aibom-dev/aibom/test/crds"
)

func fixture(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	u, err := conformance.DecodeObject(b)
	require.NoError(t, err)
	return u
}

func scrapeObj(t testing.TB, u *unstructured.Unstructured) adapter.Findings {
	t.Helper()
	f, err := New().Scrape(context.Background(), u)
	require.NoError(t, err)
	return f
}

func TestKinds(t *testing.T) {
	for _, k := range New().Kinds() {
		require.NoError(t, k.Validate())
		require.Equal(t, adapter.RoleTracked, k.Role, k.Kind)
	}
}

func TestCRDsMatchKinds(t *testing.T) {
	loaded := crds.Load(t, crds.Dir("kuberay"))
	for _, k := range New().Kinds() {
		crd, ok := loaded[k.Group+"/"+k.Kind]
		require.True(t, ok, "no test CRD for %s", k)
		delete(loaded, k.Group+"/"+k.Kind)
		crds.Check(t, k, crd)
	}
	require.Empty(t, loaded)
}

// The Ray Serve LLM config names the model by its source, served under the
// model id; the engine is vLLM; groups follow the cluster's group names.
func TestRayServiceLLM(t *testing.T) {
	f := scrapeObj(t, fixture(t, "rayservice-llm.yaml"))
	require.Equal(t, []adapter.Model{{
		Name: "Qwen/Qwen2.5-7B-Instruct", ServedName: "qwen2.5-7b", Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.serveConfigV2.applications[0].args.llm_configs[0].model_loading_config.model_source"},
	}}, f.Models)
	groups := map[string]string{}
	for _, c := range f.Containers {
		groups[c.Name] = c.Group
	}
	require.Equal(t, map[string]string{"ray-head": GroupHead, "ray-worker": "gpu"}, groups)
	names := map[string]adapter.Confidence{}
	for _, r := range f.Runtimes {
		names[r.Name] = r.Confidence
	}
	require.Equal(t, adapter.Declared, names[PlatformName])
	require.Equal(t, adapter.Declared, names[ServeRuntime])
	require.Equal(t, adapter.Inferred, names[LLMEngine])
}

// A model env var of the runtime env is read; a secret one never is.
func TestRuntimeEnvSecretsNotRead(t *testing.T) {
	f := scrapeObj(t, fixture(t, "rayservice-env-model.yaml"))
	require.Len(t, f.Models, 1)
	require.Equal(t, "spec.serveConfigV2.applications[0].runtime_env.env_vars(MODEL_ID)", f.Models[0].Evidence.Locator)
	b, err := os.ReadFile(filepath.Join("testdata", "rayservice-env-model.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(b), "hf_should_never_be_read")
	for _, p := range f.Properties {
		require.NotContains(t, p.Value, "hf_should_never_be_read")
	}
}

// A Serve config that does not parse is recorded, and the cluster is still
// read.
func TestUnreadableServeConfig(t *testing.T) {
	u := fixture(t, "rayservice-env-model.yaml")
	require.NoError(t, unstructured.SetNestedField(u.Object, "applications: [1, 2", "spec", "serveConfigV2"))
	f := scrapeObj(t, u)
	require.Contains(t, f.Properties, adapter.Property{Name: PropertyServeConfig, Value: Unreadable})
	require.NotEmpty(t, f.Containers)
	for _, r := range f.Runtimes {
		require.NotEqual(t, "spec.serveConfigV2", r.Evidence.Locator, "no runtime claimed from an unreadable config")
	}
}

func TestMalformed(t *testing.T) {
	for name, set := range map[string][]any{
		"serveConfigV2 is a map":  {map[string]any{"a": "b"}, "spec", "serveConfigV2"},
		"workerGroupSpecs is map": {map[string]any{}, "spec", "rayClusterConfig", "workerGroupSpecs"},
		"head template is string": {"x", "spec", "rayClusterConfig", "headGroupSpec", "template"},
	} {
		u := fixture(t, "rayservice-llm.yaml")
		path := make([]string, 0, len(set)-1)
		for _, p := range set[1:] {
			path = append(path, p.(string))
		}
		require.NoError(t, unstructured.SetNestedField(u.Object, set[0], path...), name)
		_, err := New().Scrape(context.Background(), u)
		require.Error(t, err, name)
	}
}

// KubeRay's default submitter (no submitterPodTemplate) runs the head's
// image: a submitter pod running the head's digest counts as a second pod
// running it. With a submitterPodTemplate, or in HTTPMode, it does not.
func TestDefaultSubmitterRunsTheHeadDigest(t *testing.T) {
	const d = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	pods := []digest.Pod{
		{Name: "batch-infer-head-x", Statuses: []digest.PodContainerStatus{{Name: "ray-head", Image: "rayproject/ray:2.40.0-gpu", ImageID: "docker.io/rayproject/ray@" + d}}},
		{Name: "batch-infer-sub", Statuses: []digest.PodContainerStatus{{Name: SubmitterContainer, Image: "rayproject/ray:2.40.0-gpu", ImageID: "docker.io/rayproject/ray@" + d}}},
	}
	headPods := func(u *unstructured.Unstructured) int {
		t.Helper()
		f := scrapeObj(t, u)
		for i, c := range f.Containers {
			if c.Group == GroupHead {
				r := digest.Resolve(f.Containers, pods)[i]
				require.Len(t, r.Running, 1)
				return r.Running[0].Pods
			}
		}
		t.Fatal("no head container")
		return 0
	}
	u := fixture(t, "rayjob-batch.yaml")
	unstructured.RemoveNestedField(u.Object, "spec", "submitterPodTemplate")
	require.Equal(t, 2, headPods(u))

	http := u.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(http.Object, "HTTPMode", "spec", "submissionMode"))
	require.Equal(t, 1, headPods(http))

	// With its own template the submitter is a container of its own.
	require.Equal(t, 1, headPods(fixture(t, "rayjob-batch.yaml")))
}
