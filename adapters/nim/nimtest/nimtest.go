// Package nimtest holds the conformance fixtures of the nim adapter, in the
// style of net/http/httptest: the adapter's own conformance test and the run
// of the suite over the plugin transport (pkg/adapter/plugin) share them, so
// each fixture and expectation is written once.
package nimtest

import (
	"errors"
	"path/filepath"
	"runtime"

	"github.com/aibom-dev/aibom/adapters/nim"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Fixtures returns the adapter's conformance fixtures: every manifest in
// adapters/nim/testdata, found from this file's path so that any working
// directory will do, with the facts each must give.
func Fixtures() ([]conformance.Fixture, error) {
	declaredNIM := conformance.Declared(nim.RuntimeName)
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("nimtest: cannot locate the testdata folder")
	}
	return conformance.LoadFixtures(filepath.Join(filepath.Dir(file), "..", "testdata", "*.yaml"), map[string]conformance.Expect{
		"nimservice-digest": {
			// The digest written as a tag is reported as a digest reference.
			Images:   []string{"nvcr.io/nim/nvidia/llama-3.2-nv-embedqa-1b-v2@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
			Runtimes: []conformance.Claim{declaredNIM},
			Models:   []conformance.Claim{conformance.Inferred("nvidia/llama-3.2-nv-embedqa-1b-v2")},
			Data:     []conformance.Claim{conformance.Declared("/data/nim"), conformance.Declared("emptyDir")},
			Properties: map[string]string{
				nim.PropertyOperatorReference: "nvcr.io/nim/nvidia/llama-3.2-nv-embedqa-1b-v2:sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				nim.PropertyInferencePlatform: nim.DefaultInferencePlatform,
			},
			PodNames: podNames("embed"),
		},
		"nimservice-llama": {
			Images:     []string{"nvcr.io/nim/meta/llama-3.2-1b-instruct:1.12.0"},
			Runtimes:   []conformance.Claim{declaredNIM},
			Models:     []conformance.Claim{conformance.Inferred("meta/llama-3.2-1b-instruct")},
			Data:       []conformance.Claim{conformance.Declared("meta-llama-3-2-1b-instruct")},
			Properties: map[string]string{nim.PropertyReplicas: "1", nim.PropertyStoragePrefix + "nimCache.name": "meta-llama-3-2-1b-instruct"},
			PodNames:   podNames("meta-llama-3-2-1b-instruct"),
			// NGC_API_KEY is written inline: withheld, and recorded.
			Redactions: []adapter.Redaction{{Locator: "spec.env[0](NGC_API_KEY)", Reason: podtemplate.ReasonSecretName}},
		},
		"nimservice-multi-llm": {
			Images:     []string{"nvcr.io/nim/nvidia/llm-nim:1.12.0"},
			Runtimes:   []conformance.Claim{declaredNIM},
			Models:     []conformance.Claim{conformance.Inferred("meta-llama/Llama-3.2-1B-Instruct")},
			Data:       []conformance.Claim{conformance.Declared("llm-nim-pvc")},
			Properties: map[string]string{nim.PropertyStoragePrefix + "pvc.create": "true", nim.PropertyStoragePrefix + "pvc.size": "50Gi"},
			PodNames:   podNames("llm-nim"),
		},
		"nimservice-multinode": {
			Images:   []string{"nvcr.io/nim/meta/llama-3.1-405b-instruct:1.8.4", "busybox:1.36", "nginx:1.27"},
			Runtimes: []conformance.Claim{declaredNIM},
			Models: []conformance.Claim{
				conformance.Declared("meta-llama/Llama-3.1-405B-Instruct"),
				conformance.Declared("llama-405b"),
				conformance.Inferred("meta/llama-3.1-405b-instruct"),
			},
			Data: []conformance.Claim{conformance.Declared("llama-3-1-405b")},
			Properties: map[string]string{
				nim.PropertyMultiNodePrefix + "backendType":          nim.DefaultBackendType,
				nim.PropertyMultiNodePrefix + "parallelism.pipeline": "2",
				nim.PropertyMultiNodePrefix + "parallelism.tensor":   "8",
			},
			PodNames: podNames("llama-3-1-405b"),
		},
		"nimservice-pvc": {
			Images:   []string{"nvcr.io/nim/mistralai/mistral-nemo-12b-instruct:latest"},
			Runtimes: []conformance.Claim{declaredNIM},
			Models: []conformance.Claim{
				conformance.Declared("mistralai/Mistral-Nemo-Instruct-2407"),
				conformance.Inferred("mistralai/mistral-nemo-12b-instruct"),
			},
			Data:       []conformance.Claim{conformance.Declared("nim-model-store")},
			Properties: map[string]string{nim.PropertyInferencePlatform: "kserve", nim.PropertyStoragePrefix + "pvc.subPath": "mistral"},
			PodNames:   podNames("mistral-nemo"),
		},
	})
}

// podNames are the names the operator gives the NIM container of a
// NIMService called name.
func podNames(name string) map[string][]string {
	return map[string][]string{name + "-ctr": {name + "-ctr", nim.LeaderContainerName, nim.WorkerContainerName}}
}
