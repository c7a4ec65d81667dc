// Package kuberaytest holds the conformance fixtures of the kuberay adapter.
package kuberaytest

import (
	"errors"
	"path/filepath"
	"runtime"

	"github.com/aibom-dev/aibom/adapters/kuberay"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// Fixtures returns the adapter's conformance fixtures: every manifest in
// adapters/kuberay/testdata, with the facts each must give.
func Fixtures() ([]conformance.Fixture, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("kuberaytest: cannot locate the testdata folder")
	}
	ray := conformance.Declared(kuberay.PlatformName)
	return conformance.LoadFixtures(filepath.Join(filepath.Dir(file), "..", "testdata", "*.yaml"), map[string]conformance.Expect{
		"rayservice-llm": {
			Images:   []string{"rayproject/ray-llm:2.46.0-py311-cu124"},
			Runtimes: []conformance.Claim{ray, conformance.Declared(kuberay.ServeRuntime), conformance.Inferred(kuberay.LLMEngine)},
			Models:   []conformance.Claim{conformance.Declared("Qwen/Qwen2.5-7B-Instruct")},
			Properties: map[string]string{
				kuberay.PropertyRayVersion:                "2.46.0",
				kuberay.PropertyServeApp + "0.name":       "llm",
				kuberay.PropertyServeApp + "0.importPath": "ray.serve.llm:build_openai_app",
				kuberay.PropertyWorkerGroup + "0.name":    "gpu",
			},
		},
		"rayservice-env-model": {
			Runtimes: []conformance.Claim{ray, conformance.Declared(kuberay.ServeRuntime)},
			Models:   []conformance.Claim{conformance.Inferred("mistralai/Mistral-7B-Instruct-v0.3")},
		},
		"rayjob-batch": {
			Images:   []string{"rayproject/ray:2.40.0", "rayproject/ray:2.40.0-gpu"},
			Runtimes: []conformance.Claim{ray},
			Models:   []conformance.Claim{conformance.Declared("meta-llama/Llama-3.2-3B-Instruct")},
		},
		"raycluster": {
			Images:   []string{"rayproject/ray:2.40.0"},
			Runtimes: []conformance.Claim{ray},
		},
	})
}
