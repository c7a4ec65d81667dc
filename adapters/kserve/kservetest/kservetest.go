// Package kservetest holds the conformance fixtures of the kserve adapter,
// shared by the adapter's own conformance test and any run of the suite over
// another transport.
package kservetest

import (
	"errors"
	"path/filepath"
	"runtime"

	"github.com/aibom-dev/aibom/adapters/kserve"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Fixtures returns the adapter's conformance fixtures: every manifest in
// adapters/kserve/testdata, with the facts each must give.
func Fixtures() ([]conformance.Fixture, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("kservetest: cannot locate the testdata folder")
	}
	platform := conformance.Declared(kserve.PlatformName)
	dir := filepath.Join(filepath.Dir(file), "..", "testdata")
	fixtures, err := conformance.LoadFixtures(filepath.Join(dir, "*.yaml"), map[string]conformance.Expect{
		"isvc-cluster-runtime": {
			// The image is the ClusterServingRuntime's.
			Images:     []string{"kserve/huggingfaceserver:v0.15.2"},
			Runtimes:   []conformance.Claim{platform, conformance.Inferred("huggingface")},
			Models:     []conformance.Claim{conformance.Declared("google-bert/bert-base-uncased")},
			PodNames:   map[string][]string{kserve.ModelContainer: {}},
			Properties: map[string]string{kserve.PropertyPredictorPrefix + "runtimeKind": "ClusterServingRuntime"},
		},
		"isvc-vllm-raw": {
			// The image is the namespace ServingRuntime's.
			Images:   []string{"vllm/vllm-openai:v0.9.2"},
			Runtimes: []conformance.Claim{platform, conformance.Inferred("vllm")},
			Models:   []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-8B-Instruct")},
			Properties: map[string]string{
				kserve.PropertyDeploymentMode:                  "RawDeployment",
				kserve.PropertyPredictorPrefix + "runtime":     "vllm-runtime",
				kserve.PropertyPredictorPrefix + "modelFormat": "vLLM",
				kserve.PropertyPredictorPrefix + "maxReplicas": "2",
			},
		},
		"isvc-sklearn-legacy": {
			Runtimes:   []conformance.Claim{platform, conformance.Inferred("sklearn")},
			Models:     []conformance.Claim{conformance.Declared("iris-classifier")},
			Properties: map[string]string{kserve.PropertyPredictorPrefix + "runtimeVersion": "1.5.1"},
		},
		"isvc-custom-transformer": {
			Images: []string{"ghcr.io/huggingface/text-generation-inference:2.4.1", "registry.example.com/tokenizer-transformer:0.3.0"},
			Models: []conformance.Claim{conformance.Declared("mistralai/Mistral-7B-Instruct-v0.3")},
		},
		"isvc-modelcar": {
			Images:     []string{"vllm/vllm-openai:v0.8.5"},
			Runtimes:   []conformance.Claim{platform, conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("granite-3.1-2b-instruct")},
			PodNames:   map[string][]string{kserve.ModelContainer: {kserve.ModelContainer}},
			Redactions: []adapter.Redaction{{Locator: "spec.predictor.model.env[0](HF_TOKEN)", Reason: podtemplate.ReasonSecretName}},
			Properties: map[string]string{kserve.PropertyPredictorPrefix + "modelFormat": "vLLM@1"},
		},
		"llmisvc-v1alpha2-multinode": {
			Images:   []string{"vllm/vllm-openai:v0.9.1"},
			Runtimes: []conformance.Claim{platform},
			Models:   []conformance.Claim{conformance.Declared("deepseek-ai/DeepSeek-R1-Distill-Llama-70B")},
			Properties: map[string]string{
				kserve.PropertyLLMPrefix + "parallelism.tensor":   "8",
				kserve.PropertyLLMPrefix + "parallelism.pipeline": "2",
			},
		},
		"llmisvc-qwen": {
			// The scheduler's image comes from the config in spec.baseRefs.
			Images:   []string{"vllm/vllm-openai:v0.9.1", "ghcr.io/llm-d/llm-d-inference-scheduler:v0.2.1"},
			Runtimes: []conformance.Claim{platform, conformance.Inferred("vllm")},
			Models:   []conformance.Claim{conformance.Declared("Qwen/Qwen3-0.6B")},
			Properties: map[string]string{
				kserve.PropertyLLMPrefix + "replicas":         "2",
				kserve.PropertyLLMPrefix + "prefill.replicas": "1",
				kserve.PropertyLLMPrefix + "baseRef.0":        "kserve-config-llm-template",
			},
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
		"isvc-vllm-raw":        {"servingruntime-vllm"},
		"isvc-cluster-runtime": {"clusterservingruntime-hf"},
		"llmisvc-qwen":         {"llminferenceserviceconfig-template"},
	})
}
