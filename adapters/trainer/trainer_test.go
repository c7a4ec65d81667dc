package trainer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
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
	roles := map[string]adapter.Role{}
	for _, k := range New().Kinds() {
		require.NoError(t, k.Validate())
		roles[k.Kind] = k.Role
	}
	require.Equal(t, map[string]adapter.Role{"TrainJob": adapter.RoleTracked, "PyTorchJob": adapter.RoleTracked, "JobSet": adapter.RoleWalkOnly,
		"TrainingRuntime": adapter.RoleReferenced, "ClusterTrainingRuntime": adapter.RoleReferenced}, roles)
}

func TestCRDsMatchKinds(t *testing.T) {
	loaded := crds.Load(t, crds.Dir("trainer"))
	for _, k := range New().Kinds() {
		crd, ok := loaded[k.Group+"/"+k.Kind]
		require.True(t, ok, "no test CRD for %s", k)
		delete(loaded, k.Group+"/"+k.Kind)
		crds.Check(t, k, crd)
	}
	require.Empty(t, loaded)
}

// The base model, the dataset, the trainer image and the framework, each
// with its evidence.
func TestTrainJob(t *testing.T) {
	f := scrapeObj(t, fixture(t, "trainjob-sft.yaml"))
	require.Equal(t, []adapter.Framework{{Name: FrameworkTrainer, Purpose: adapter.PurposeTraining, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.runtimeRef"}}}, onlyFramework(f, FrameworkTrainer))
	require.Equal(t, adapter.Model{Name: "meta-llama/Llama-3.2-1B-Instruct", Source: "hf://meta-llama/Llama-3.2-1B-Instruct", Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.initializer.model.storageUri"}}, f.Models[0])
	require.Equal(t, []adapter.Data{{Name: "tatsu-lab/alpaca", Kind: DataKindDataset, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.initializer.dataset.storageUri"}}}, f.Data)
	require.Len(t, f.Containers, 1)
	require.Equal(t, TrainerContainer, f.Containers[0].Name)
	require.Len(t, f.Accelerators, 1)
	require.Contains(t, f.Accelerators[0].Evidence.Locator, "spec.trainer.resourcesPerNode")
}

// Without a trainer image, the runtime's image runs: no container is
// reported, and the env still names the model and the dataset.
func TestTrainJobWithoutImage(t *testing.T) {
	f := scrapeObj(t, fixture(t, "trainjob-env.yaml"))
	require.Empty(t, f.Containers)
	require.Equal(t, "spec.trainer.env[0](RUN_MODEL)", f.Models[0].Evidence.Locator)
	require.Equal(t, "spec.trainer.env[1](RUN_DATASET)", f.Data[0].Evidence.Locator)
}

func TestPyTorchJob(t *testing.T) {
	f := scrapeObj(t, fixture(t, "pytorchjob-mnist.yaml"))
	require.Len(t, onlyFramework(f, FrameworkPyTorch), 1)
	groups := map[string]bool{}
	for _, c := range f.Containers {
		groups[c.Group] = true
	}
	require.Equal(t, map[string]bool{"master": true, "worker": true}, groups)
}

func TestMalformed(t *testing.T) {
	for name, tc := range map[string]struct {
		file  string
		value any
		path  []string
	}{
		"trainer is a list":      {"trainjob-sft.yaml", []any{}, []string{"spec", "trainer"}},
		"storageUri is a number": {"trainjob-sft.yaml", int64(1), []string{"spec", "initializer", "model", "storageUri"}},
		"runtimeRef is a string": {"trainjob-sft.yaml", "x", []string{"spec", "runtimeRef"}},
		"role is a string":       {"pytorchjob-mnist.yaml", "x", []string{"spec", "pytorchReplicaSpecs", "Master"}},
	} {
		u := fixture(t, tc.file)
		require.NoError(t, unstructured.SetNestedField(u.Object, tc.value, tc.path...), name)
		_, err := New().Scrape(context.Background(), u)
		require.Error(t, err, name)
	}
}

func onlyFramework(f adapter.Findings, name string) []adapter.Framework {
	var out []adapter.Framework
	for _, x := range f.Frameworks {
		if x.Name == name {
			out = append(out, x)
		}
	}
	return out
}

// The runtime a TrainJob names gives the initializer's image and the
// framework; the trainer image the TrainJob sets replaces the runtime's.
func TestTrainingRuntimeReference(t *testing.T) {
	tj := fixture(t, "trainjob-sft.yaml")
	rt := fixture(t, "references/clustertrainingruntime-torch.yaml")
	r := &conformance.ObjectResolver{Kinds: New().Kinds(), Namespace: tj.GetNamespace(), Objects: []*unstructured.Unstructured{rt}}
	f, err := New().Scrape(adapter.WithResolver(context.Background(), r), tj)
	require.NoError(t, err)
	var images []string
	for _, c := range f.Containers {
		images = append(images, c.Image)
	}
	require.Equal(t, []string{"registry.example.com/ml/sft-trainer:0.4.0", "ghcr.io/kubeflow/trainer/model-initializer:v2.0.0"}, images)
	require.Equal(t, []adapter.Framework{{Name: FrameworkPyTorch, Purpose: adapter.PurposeTraining, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "ClusterTrainingRuntime/torch-distributed:spec.mlPolicy.torch"}}}, onlyFramework(f, FrameworkPyTorch))
	require.Equal(t, []adapter.Reference{{Group: Group, Kind: "ClusterTrainingRuntime", Name: "torch-distributed", Locator: "spec.runtimeRef.name"}}, r.Lookups())

	// Forbidden: an unresolved framework claim, the rest stands.
	r = &conformance.ObjectResolver{Kinds: New().Kinds(), Namespace: tj.GetNamespace(), Fail: adapter.ReasonForbidden}
	f, err = New().Scrape(adapter.WithResolver(context.Background(), r), tj)
	require.NoError(t, err)
	require.Equal(t, []adapter.Framework{{Name: "torch-distributed", Purpose: adapter.PurposeTraining, Confidence: adapter.Unresolved,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.runtimeRef.name"}}}, onlyFramework(f, "torch-distributed"))
	require.NotEmpty(t, f.Models)
}
