// Package dynamotest holds the conformance fixtures and options of the dynamo
// adapter, in the style of net/http/httptest: the adapter's own conformance
// test and the run of the suite over the plugin transport (pkg/adapter/plugin)
// share them, so each fixture and expectation is written once.
package dynamotest

import (
	"errors"
	"path/filepath"
	"runtime"

	"github.com/aibom-dev/aibom/adapters/dynamo"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Fixtures returns the adapter's conformance fixtures: every manifest in
// adapters/dynamo/testdata, found from this file's path so that any working
// directory will do, with the facts each must give.
func Fixtures() ([]conformance.Fixture, error) {
	const (
		vllm   = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"
		sglang = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.1"
		trtllm = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.4.1"
	)
	main := map[string][]string{dynamo.MainContainer: {dynamo.MainContainer}}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("dynamotest: cannot locate the testdata folder")
	}
	return conformance.LoadFixtures(filepath.Join(filepath.Dir(file), "..", "testdata", "*.yaml"), map[string]conformance.Expect{
		"dcd-v1alpha1": {
			Images:     []string{vllm},
			Runtimes:   []conformance.Claim{conformance.Declared("vllm"), conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("Qwen/Qwen3-0.6B"), conformance.Inferred("Qwen/Qwen3-0.6B")},
			Properties: map[string]string{dynamo.PropertyBackendFramework: "vllm", "dynamo.component.0.name": "VllmDecodeWorker", "dynamo.component.0.replicas": "2"},
			PodNames:   main,
		},
		"dcd-v1beta1": {
			Images:     []string{vllm},
			Runtimes:   []conformance.Claim{conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-405B-Instruct")},
			Properties: map[string]string{"dynamo.component.0.name": "decode", "dynamo.component.0.nodeCount": "2"},
			PodNames:   main,
		},
		"sglang-agg-v1beta1": {
			Images:   []string{sglang},
			Runtimes: []conformance.Claim{conformance.Inferred("sglang")},
			Models: []conformance.Claim{
				conformance.Declared("deepseek-ai/DeepSeek-R1-Distill-Llama-8B"),
			},
			Properties: map[string]string{"dynamo.component.0.type": "frontend", "dynamo.component.1.type": "worker"},
			PodNames:   main,
		},
		"trtllm-multinode-v1alpha1": {
			Images:   []string{trtllm},
			Runtimes: []conformance.Claim{conformance.Declared("tensorrt-llm"), conformance.Inferred("tensorrt-llm")},
			Models: []conformance.Claim{
				conformance.Inferred("nvidia/Llama-3.1-8B-Instruct-FP8"),
				conformance.Declared("nvidia/Llama-3.1-8B-Instruct-FP8"),
				conformance.Declared("meta-llama/Llama-3.1-8B-Instruct"),
			},
			Properties: map[string]string{dynamo.PropertyBackendFramework: "trtllm", "dynamo.component.1.nodeCount": "2"},
			// The main container keeps its pod name "main" when the spec renames it.
			PodNames: map[string][]string{"trtllm": {dynamo.MainContainer}},
		},
		"vllm-disagg-v1alpha1": {
			Images:     []string{vllm, "busybox:1.36", "prom/statsd-exporter:v0.26.0"},
			Runtimes:   []conformance.Claim{conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("Qwen/Qwen3-0.6B")},
			Data:       []conformance.Claim{conformance.Inferred("model-cache")},
			Properties: map[string]string{"dynamo.component.1.subComponentType": "decode", "dynamo.component.2.subComponentType": "prefill"},
			PodNames:   main,
			// HF_TOKEN has a literal value: withheld, and recorded.
			Redactions: []adapter.Redaction{{Locator: "spec.services.VllmDecodeWorker.envs[1](HF_TOKEN)", Reason: podtemplate.ReasonSecretName}},
		},
		"vllm-disagg-v1beta1": {
			Images:     []string{vllm, "prom/statsd-exporter:v0.26.0"},
			Runtimes:   []conformance.Claim{conformance.Declared("vllm"), conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("Qwen/Qwen3-0.6B")},
			Data:       []conformance.Claim{conformance.Inferred("model-cache (model-cache)")},
			Properties: map[string]string{dynamo.PropertyBackendFramework: "vllm", "dynamo.component.1.type": "decode"},
			PodNames:   main,
		},
	})
}

// Options returns the options of the adapter's conformance runs.
func Options() []conformance.Option {
	return []conformance.Option{
		conformance.AllowValue("c1899de289a04d12100db370d81485cdf75e47ca",
			"spec.components[1].modelRef.revision in vllm-disagg-v1beta1 is a Git commit hash, reported as the model's version; "+
				"podtemplate.Redact masks 40-hex runs (a documented false positive)"),
	}
}
