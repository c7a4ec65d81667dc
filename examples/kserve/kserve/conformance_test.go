package kserve_test

import (
	"testing"

	"github.com/aibom-dev/aibom/examples/kserve/kserve"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// fixtures loads every manifest in testdata with the facts each must give.
func fixtures(t *testing.T) []conformance.Fixture {
	t.Helper()
	fs, err := conformance.LoadFixtures("testdata/*.yaml", map[string]conformance.Expect{
		"sklearn-iris": {
			Runtimes: []conformance.Claim{conformance.Declared("sklearn")},
			Models:   []conformance.Claim{conformance.Declared("gs://kfserving-examples/models/sklearn/1.0/model")},
			Properties: map[string]string{
				kserve.PropertyMinReplicas: "1", kserve.PropertyMaxReplicas: "3", kserve.PropertyDeploymentMode: "RawDeployment",
			},
		},
		"huggingface-llama": {
			Images:   []string{"kserve/huggingfaceserver:v0.15.0-gpu"},
			Runtimes: []conformance.Claim{conformance.Declared("huggingface"), conformance.Declared("kserve-huggingfaceserver")},
			Models:   []conformance.Claim{conformance.Declared("hf://meta-llama/Llama-3.1-8B-Instruct")},
		},
		"custom-predictor": {
			Images:   []string{"vllm/vllm-openai:v0.8.5"},
			Runtimes: []conformance.Claim{conformance.Inferred("vllm")},
			Models:   []conformance.Claim{conformance.Declared("Qwen/Qwen2.5-7B-Instruct")},
			Data:     []conformance.Claim{conformance.Inferred("models (qwen-weights)")},
		},
		"storage-credentials": {
			Runtimes:   []conformance.Claim{conformance.Declared("xgboost")},
			Models:     []conformance.Claim{conformance.Declared("https://" + podtemplate.Redacted + "@models.example.com/xgb/model.bst")},
			Redactions: []adapter.Redaction{{Locator: "spec.predictor.model.storageUri", Reason: podtemplate.ReasonURLCredentials}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		if fs[i].Name == "bad-predictor" {
			fs[i].WantErr = true
		}
	}
	return fs
}

// TestConformance runs the conformance suite on the adapter in process.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.NewHarness(kserve.New(), fixtures(t)...))
}

// TestConformanceOverPlugin runs the same suite through the plugin
// transport (gRPC, in memory): what the controller gets from the plugin
// binary.
func TestConformanceOverPlugin(t *testing.T) {
	c, err := plugin.InProcess(kserve.New())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if c.Name() != kserve.Name {
		t.Fatalf("over the transport the adapter is named %q", c.Name())
	}
	conformance.Run(t, conformance.NewHarness(c, fixtures(t)...))
}
