// Package trainertest holds the conformance fixtures of the trainer adapter.
package trainertest

import (
	"errors"
	"path/filepath"
	"runtime"

	"github.com/aibom-dev/aibom/adapters/trainer"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Fixtures returns the adapter's conformance fixtures: every manifest in
// adapters/trainer/testdata, with the facts each must give.
func Fixtures() ([]conformance.Fixture, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("trainertest: cannot locate the testdata folder")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "testdata")
	fixtures, err := conformance.LoadFixtures(filepath.Join(dir, "*.yaml"), map[string]conformance.Expect{
		"trainjob-sft": {
			Images: []string{"registry.example.com/ml/sft-trainer:0.4.0", "ghcr.io/kubeflow/trainer/model-initializer:v2.0.0"},
			Models: []conformance.Claim{conformance.Declared("meta-llama/Llama-3.2-1B-Instruct")},
			Data:   []conformance.Claim{conformance.Declared("tatsu-lab/alpaca")},
			Properties: map[string]string{
				trainer.PropertyTrainerPrefix + "runtimeRef.kind": trainer.DefaultRuntimeKind,
				trainer.PropertyTrainerPrefix + "runtimeRef.name": "torch-distributed",
				trainer.PropertyTrainerPrefix + "numNodes":        "2",
			},
		},
		"trainjob-env": {
			// The trainer image is the runtime's.
			Images:     []string{"registry.example.com/ml/mpi-cuda:12.4"},
			Models:     []conformance.Claim{conformance.Inferred("Qwen/Qwen2.5-1.5B-Instruct")},
			Data:       []conformance.Claim{conformance.Inferred("openai/gsm8k")},
			Properties: map[string]string{trainer.PropertyTrainerPrefix + "runtimeRef.kind": "TrainingRuntime"},
			Redactions: []adapter.Redaction{{Locator: "spec.trainer.env[2](HF_TOKEN)", Reason: podtemplate.ReasonSecretName}},
		},
		"pytorchjob-mnist": {
			Images:     []string{"registry.example.com/ml/mnist-train:1.2.0"},
			Properties: map[string]string{trainer.PropertyPyTorchJobPrefix + "replicas.Worker": "2"},
		},
	})
	if err != nil {
		return nil, err
	}
	refs, err := conformance.LoadReferences(filepath.Join(dir, "references", "*.yaml"))
	if err != nil {
		return nil, err
	}
	return conformance.WithReferences(fixtures, refs, map[string][]string{
		"trainjob-sft": {"clustertrainingruntime-torch"},
		"trainjob-env": {"trainingruntime-mpi"},
	})
}
