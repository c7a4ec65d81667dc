package scan

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// evaluateAll evaluates manifests as aibom scan does, objects no adapter
// reads included.
func evaluateAll(t *testing.T, paths ...string) []Root {
	t.Helper()
	reg := registry(t)
	snap, err := LoadFiles(reg, FileOptions{Paths: paths})
	require.NoError(t, err)
	roots, err := Evaluate(context.Background(), reg, graph.NewMemoryStore(snap.Objects),
		Options{Tool: document.Tool{Name: document.ToolName, Version: "test"}, MaxDocumentBytes: 512 * 1024})
	require.NoError(t, err)
	return roots
}

// named is what a document names: runtimes and platforms, frameworks,
// models, each sorted.
type named struct{ runtimes, frameworks, models []string }

func namedIn(t *testing.T, doc string) named {
	t.Helper()
	var bom struct {
		Components []struct{ Type, Name string } `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &bom))
	var n named
	for _, c := range bom.Components {
		switch c.Type {
		case "application", "platform":
			n.runtimes = append(n.runtimes, c.Name)
		case "framework":
			n.frameworks = append(n.frameworks, c.Name)
		case "machine-learning-model":
			n.models = append(n.models, c.Name)
		}
	}
	for _, l := range [][]string{n.runtimes, n.frameworks, n.models} {
		sort.Strings(l)
	}
	return n
}

// The held-out manifests (testdata/heldout, written for this test, of
// operators and frameworks no adapter, profile or fixture names): what the
// scanner names in each.
func TestHeldOutManifests(t *testing.T) {
	tests := []struct {
		file    string
		kind    string
		generic bool
		want    named
	}{
		{"tensorflow-job.yaml", "TFTrainingJob", true, named{frameworks: []string{"tensorflow"}, models: []string{"google-bert/bert-base-uncased"}}},
		{"serving-group.yaml", "InferenceGroup", true, named{runtimes: []string{"vllm"}, models: []string{"Qwen/Qwen2.5-72B-Instruct"}}},
		{"eval-job.yaml", "ModelEvaluation", true, named{frameworks: []string{"lm-evaluation-harness"}, models: []string{"mistralai/Mistral-7B-Instruct-v0.3"}}},
		{"horovod-mpijob.yaml", "HorovodJob", true, named{frameworks: []string{"horovod"}}},
		{"jax-job.yaml", "JAXJob", true, named{frameworks: []string{"jax"}}},
		{"sglang-pod.yaml", "Pod", true, named{runtimes: []string{"sglang"}, models: []string{"meta-llama/Llama-3.1-8B-Instruct"}}},
		{"model-download-job.yaml", "Job", false, named{models: []string{"microsoft/Phi-3-mini-4k-instruct"}}},
		{"paddle-job.yaml", "DistributedTraining", true, named{frameworks: []string{"paddlepaddle"}, models: []string{"baidu/ERNIE-4.5-0.3B-PT"}}},
		{"ray-batch-job.yaml", "Job", false, named{runtimes: []string{"ray"}, models: []string{"BAAI/bge-large-en-v1.5"}}},
		{"xgboost-job.yaml", "XGBoostTrainingJob", true, named{frameworks: []string{"xgboost"}}},
		{"placeholder-server.yaml", "LLMServer", true, named{runtimes: []string{"tgi"}}},
		{"storage-uri-server.yaml", "ModelDeployment", true, named{runtimes: []string{"vllm"}, models: []string{"DeepSeek-V3-W8A8"}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			roots := evaluateAll(t, filepath.Join("testdata", "heldout", tt.file))
			require.Len(t, roots, 1)
			r := roots[0]
			require.NoError(t, r.Err())
			require.Equal(t, tt.kind, r.Entry.Kind.Kind)
			require.Equal(t, tt.generic, r.Generic)
			require.False(t, r.Report.Unmatched)
			require.Equal(t, tt.want, namedIn(t, r.Document()))
		})
	}
}

func TestGenericRoots(t *testing.T) {
	dir := t.TempDir()
	// No AI signal: not reported, even though it has a pod template.
	web := writeFile(t, dir, "web.yaml", `apiVersion: web.example/v1
kind: Website
metadata: {name: site}
spec:
  template: {spec: {containers: [{name: web, image: "nginx:1.27"}]}}
`)
	require.Empty(t, evaluateAll(t, web))

	// A Pod with a controller is not a root of its own, nor is a kind no
	// adapter knows whose controller is in the input.
	owned := writeFile(t, dir, "owned.yaml", `apiVersion: serve.example/v1
kind: Fleet
metadata: {name: fleet, uid: 11111111-1111-1111-1111-111111111111}
spec:
  server: {template: {spec: {containers: [{name: s, image: "lmsysorg/sglang:v0.4.6"}]}}}
---
apiVersion: serve.example/v1
kind: Member
metadata:
  name: member
  ownerReferences: [{apiVersion: serve.example/v1, kind: Fleet, name: fleet, uid: 11111111-1111-1111-1111-111111111111, controller: true}]
spec:
  template: {spec: {containers: [{name: s, image: "lmsysorg/sglang:v0.4.6"}]}}
---
apiVersion: v1
kind: Pod
metadata:
  name: fleet-0
  ownerReferences: [{apiVersion: serve.example/v1, kind: Fleet, name: fleet, uid: 11111111-1111-1111-1111-111111111111, controller: true}]
spec: {containers: [{name: s, image: "lmsysorg/sglang:v0.4.6"}]}
status:
  containerStatuses:
  - {name: s, image: "lmsysorg/sglang:v0.4.6", imageID: "docker.io/lmsysorg/sglang@sha256:1111111111111111111111111111111111111111111111111111111111111111"}
`)
	roots := evaluateAll(t, owned)
	require.Len(t, roots, 1)
	require.Equal(t, "Fleet", roots[0].Entry.Kind.Kind)
	require.True(t, roots[0].Generic)
	// Its pod gives the running digest.
	resolved, total := roots[0].Digests()
	require.Equal(t, 1, resolved)
	require.Equal(t, 1, total)

	// A kind no adapter knows above a tracked workload is its generic root:
	// the workload is absorbed and listed, one document.
	chain := writeFile(t, dir, "chain.yaml", `apiVersion: serve.example/v1
kind: Stack
metadata: {name: stack, uid: 22222222-2222-2222-2222-222222222222}
spec:
  template: {spec: {containers: [{name: s, image: "vllm/vllm-openai:v0.8.4"}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: engine
  ownerReferences: [{apiVersion: serve.example/v1, kind: Stack, name: stack, uid: 22222222-2222-2222-2222-222222222222, controller: true}]
spec:
  selector: {matchLabels: {app: e}}
  template:
    metadata: {labels: {app: e}}
    spec: {containers: [{name: s, image: "vllm/vllm-openai:v0.8.4"}]}
`)
	roots = evaluateAll(t, chain)
	require.Len(t, roots, 1)
	require.Equal(t, "Stack", roots[0].Entry.Kind.Kind)
	require.True(t, roots[0].Generic)
	require.Equal(t, []string{"Deployment.apps/engine"}, roots[0].Descendants.Owned())
}
