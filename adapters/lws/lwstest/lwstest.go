// Package lwstest holds the conformance fixtures of the lws adapter, in the
// style of net/http/httptest: the adapter's own conformance test and the run
// of the suite over the plugin transport (pkg/adapter/plugin) share them, so
// each fixture and expectation is written once.
package lwstest

import (
	"errors"
	"path/filepath"
	"runtime"

	"github.com/aibom-dev/aibom/adapters/lws"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// Fixtures returns the adapter's conformance fixtures: every manifest in
// adapters/lws/testdata, found from this file's path so that any working
// directory will do, with the facts each must give.
func Fixtures() ([]conformance.Fixture, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("lwstest: cannot locate the testdata folder")
	}
	return conformance.LoadFixtures(filepath.Join(filepath.Dir(file), "..", "testdata", "*.yaml"), map[string]conformance.Expect{
		"disaggregatedset-inline": {
			Images:   []string{"ghcr.io/llm-d/llm-d:v0.2.0"},
			Runtimes: []conformance.Claim{conformance.Inferred("llm-d")},
			Models:   []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-8B-Instruct")},
			Properties: map[string]string{
				lws.PropertyRolePrefix + "0.name": "prefill", lws.PropertyRolePrefix + "1.name": "decode",
				lws.PropertyRolePrefix + "0.replicas": "3", lws.PropertyRolePrefix + "0.leaderTemplate": lws.LeaderTemplateWorker,
			},
		},
		"disaggregatedset": {
			Images:   []string{"vllm/vllm-openai:v0.10.1", "rayproject/ray:2.44.1"},
			Runtimes: []conformance.Claim{conformance.Inferred("vllm"), conformance.Inferred("ray")},
			// From the role's annotation, --model=, and "vllm serve <model>".
			Models: []conformance.Claim{conformance.Declared("Qwen/Qwen3-32B"), conformance.Inferred("Qwen/Qwen3-32B")},
			Data:   []conformance.Claim{conformance.Inferred("cache (hf-cache)")},
			Properties: map[string]string{
				lws.PropertySlices: "1", lws.PropertyRolePrefix + "1.scaling": "External",
				lws.PropertyRolePrefix + "1.leaderTemplate": lws.LeaderTemplateOwn,
			},
		},
		"leaderworkerset-leader-worker": {
			Images:   []string{"vllm/vllm-openai:v0.8.5"},
			Runtimes: []conformance.Claim{conformance.Inferred("vllm")},
			Models:   []conformance.Claim{conformance.Declared("meta-llama/Meta-Llama-3.1-405B-Instruct")},
			Properties: map[string]string{
				lws.PropertyReplicas: "2", lws.PropertySize: "2", lws.PropertyStartupPolicy: "LeaderCreated",
				lws.PropertyLeaderTemplate: lws.LeaderTemplateOwn,
			},
		},
		"leaderworkerset-worker-only": {
			Images:   []string{"lmsysorg/sglang:v0.4.6.post1-cu124"},
			Runtimes: []conformance.Claim{conformance.Inferred("sglang")},
			Models:   []conformance.Claim{conformance.Declared("deepseek-ai/DeepSeek-V3"), conformance.Declared("DeepSeek-V3")},
			Data:     []conformance.Claim{conformance.Inferred("weights (volumeClaimTemplate)")},
			Properties: map[string]string{
				lws.PropertyLeaderTemplate: lws.LeaderTemplateWorker, lws.PropertyRestartPolicy: "RecreateGroupOnPodRestart",
			},
			// HF_TOKEN is written inline: withheld, and recorded.
			Redactions: []adapter.Redaction{{
				Locator: "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].env[0](HF_TOKEN)",
				Reason:  podtemplate.ReasonSecretName,
			}},
		},
	})
}
