package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An unknown custom resource embedding pod templates, its pod, and a bare
// pod: both are generic roots with runtime and model, and the coverage note
// says where the AI pods went.
func TestScanReportsGenericRootsAndCoverage(t *testing.T) {
	f := writeFile(t, "generic.yaml", `apiVersion: serving.example.com/v1alpha1
kind: ServingGroup
metadata: {name: deepseek, namespace: ai}
spec:
  entryTemplate:
    spec:
      containers:
      - {name: leader, image: "vllm/vllm-openai:v0.8.5", args: ["--model", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"]}
---
apiVersion: v1
kind: Pod
metadata:
  name: deepseek-0
  namespace: ai
  ownerReferences: [{apiVersion: serving.example.com/v1alpha1, kind: ServingGroup, name: deepseek, uid: 11111111-2222-4333-8444-555555555555, controller: true}]
spec:
  containers:
  - {name: leader, image: "vllm/vllm-openai:v0.8.5", args: ["--model", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"]}
---
apiVersion: v1
kind: Pod
metadata: {name: adhoc, namespace: ai}
spec:
  containers:
  - {name: server, image: "lmsysorg/sglang:v0.4.6", command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"]}
`)
	code, out, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "ai         Pod           adhoc     sglang   Qwen/Qwen2.5-7B-Instruct")
	require.Contains(t, out, "ServingGroup  deepseek  vllm     deepseek-ai/DeepSeek-R1-Distill-Qwen-7B")
	require.NotContains(t, out, "deepseek-0", "the operator's pod is in the custom resource's AIBOM, not its own")
	require.Contains(t, errOut, "note: coverage in namespace ai: 2 AI pod(s): 0 under tracked roots, 2 under generic roots, 0 in no AIBOM\n")
}

// A tracked root with a signal of its own keeps its adapter's findings: the
// InferenceService names its model and no container, and the Deployment it
// absorbed (an old revision's, say) adds nothing to its document. Only a
// generic root is completed from below when it names no container.
func TestScanTrackedRootWithoutContainersKeepsItsOwnFindings(t *testing.T) {
	f := writeFile(t, "isvc.yaml", `apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama, namespace: ai, uid: 21111111-2222-4333-8444-555555555555}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      storageUri: hf://meta-llama/Llama-3.1-8B-Instruct
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-predictor-00001-deployment
  namespace: ai
  ownerReferences: [{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: llama, uid: 21111111-2222-4333-8444-555555555555, controller: true}]
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      containers:
      - {name: kserve-container, image: "vllm/vllm-openai:v0.6.3", args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]}
`)
	code, out, errOut := run(t, "scan", "-f", f, "-o", "json")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "Llama-3.1-8B-Instruct")
	require.Contains(t, out, "Deployment.apps/llama-predictor-00001-deployment", "absorbed and listed")
	require.NotContains(t, out, "Deployment/llama-predictor-00001-deployment:", "no finding of the absorbed Deployment")
}
