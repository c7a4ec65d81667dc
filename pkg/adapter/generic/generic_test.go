package generic

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
	return &unstructured.Unstructured{Object: m}
}

type claim struct{ name, locator string }

func claims(f adapter.Findings) (runtimes, frameworks, models, data, containers []claim) {
	for _, r := range f.Runtimes {
		runtimes = append(runtimes, claim{r.Name, r.Evidence.Locator})
	}
	for _, x := range f.Frameworks {
		frameworks = append(frameworks, claim{x.Name, x.Evidence.Locator})
	}
	for _, m := range f.Models {
		n := m.Name
		if m.ServedName != "" {
			n += " as " + m.ServedName
		}
		models = append(models, claim{n, m.Evidence.Locator})
	}
	for _, d := range f.Data {
		data = append(data, claim{d.Kind + ":" + d.Name, d.Evidence.Locator})
	}
	for _, c := range f.Containers {
		containers = append(containers, claim{c.Name, c.Evidence.Locator})
	}
	return
}

func TestScrape(t *testing.T) {
	tests := []struct {
		name                                           string
		doc                                            string
		runtimes, frameworks, models, data, containers []claim
	}{
		{
			name: "pod templates anywhere, read with their metadata",
			doc: `
apiVersion: x.example/v1
kind: ServingGroup
spec:
  entryTemplate:
    metadata: {annotations: {model.aibom.dev/base: Qwen/Qwen3-8B}}
    spec: {containers: [{name: engine, image: "vllm/vllm-openai:v0.8.4", args: [serve, Qwen/Qwen3-8B]}]}
  workers:
  - template:
      spec: {containers: [{name: engine, image: "vllm/vllm-openai:v0.8.4"}]}`,
			runtimes: []claim{{"vllm", "spec.entryTemplate.spec.containers[0].image"}, {"vllm", "spec.entryTemplate.spec.containers[0].image(vllm)"},
				{"vllm", "spec.workers[0].template.spec.containers[0].image"}},
			models: []claim{{"Qwen/Qwen3-8B", "spec.entryTemplate.metadata.annotations[model.aibom.dev/base]"},
				{"Qwen/Qwen3-8B", "spec.entryTemplate.spec.containers[0].args[1](vllm serve)"}},
			containers: []claim{{"engine", "spec.entryTemplate.spec.containers[0].image"}, {"engine", "spec.workers[0].template.spec.containers[0].image"}},
		},
		{
			name: "model-named fields, each located",
			doc: `
apiVersion: x.example/v1
kind: Eval
spec:
  modelName: mistralai/Mistral-7B-v0.3
  judge: {model_name: Qwen/Qwen3-32B}
  baseModel: meta-llama/Llama-3.1-8B
  adapter: {modelId: acme/lora-1}
  model.name: dotted-key/read-as-one
  runner: {name: harness, image: "ghcr.io/acme/lm-eval:0.4.8"}`,
			frameworks: []claim{{"lm-evaluation-harness", "spec.runner.image"}},
			models: []claim{{"acme/lora-1", "spec.adapter.modelId"}, {"dotted-key/read-as-one", "spec[model.name]"},
				{"meta-llama/Llama-3.1-8B", "spec.baseModel"}, {"mistralai/Mistral-7B-v0.3", "spec.modelName"},
				{"Qwen/Qwen3-32B", "spec.judge.model_name"}},
			containers: []claim{{"harness", "spec.runner.image"}},
		},
		{
			name: "a model object: name, with its URI as source; a served name beside it",
			doc: `
apiVersion: x.example/v1
kind: ModelDeployment
spec:
  servedModelName: ds
  model: {storageUri: "s3://models/DeepSeek-V3-W8A8/vllm-ascend"}
  main: {image: "quay.io/ascend/vllm-ascend:v0.9.1", args: [--served-model-name, ds]}`,
			runtimes: []claim{{"vllm", "spec.main.image"}},
			models: []claim{{"DeepSeek-V3-W8A8 as ds", "spec.main.args[0](--served-model-name)"},
				{"DeepSeek-V3-W8A8 as ds", "spec.model.storageUri"}},
			containers: []claim{{"main", "spec.main.image"}},
		},
		{
			name: "dataset storage URIs are data; placeholders and hardware models are nothing",
			doc: `
apiVersion: x.example/v1
kind: FineTune
spec:
  dataset: {storageUri: "hf://tatsu-lab/alpaca"}
  model: YOUR-MODEL-NAME
  modelId: "${MODEL}"
  gpu: {model: A100}
  nodeSelector: {model: h100}`,
			data: []claim{{"dataset:tatsu-lab/alpaca", "spec.dataset.storageUri"}},
		},
		{
			name: "env lists outside a container",
			doc: `
apiVersion: x.example/v1
kind: Server
spec:
  env: [{name: MODEL_ID, value: Qwen/Qwen3-8B}, {name: HF_TOKEN, value: hf_abcdefghijklmnopqrstuvwxyz0123456789}]`,
			models: []claim{{"Qwen/Qwen3-8B", "spec.env[0](MODEL_ID)"}},
		},
		{
			name: "a training kind implies its framework",
			doc: `
apiVersion: x.example/v1
kind: JAXJob
spec:
  worker: {template: {spec: {containers: [{name: t, image: "acme/trainer:1"}]}}}`,
			frameworks: []claim{{"jax", "kind"}},
			containers: []claim{{"t", "spec.worker.template.spec.containers[0].image"}},
		},
		{
			name: "a training kind without containers implies nothing",
			doc: `
apiVersion: x.example/v1
kind: TFJob
spec: {runPolicy: {}}`,
		},
		{
			name: "no AI signal",
			doc: `
apiVersion: x.example/v1
kind: Website
spec:
  template: {spec: {containers: [{name: web, image: "nginx:1.27"}]}}`,
			containers: []claim{{"web", "spec.template.spec.containers[0].image"}},
		},
		{
			name: "a Pod's spec is its pod spec",
			doc: `
apiVersion: v1
kind: Pod
spec:
  containers: [{name: s, image: "lmsysorg/sglang:v0.4.6", env: [{name: MODEL_ID, value: a/b}]}]`,
			runtimes:   []claim{{"sglang", "spec.containers[0].image"}},
			models:     []claim{{"a/b", "spec.containers[0].env[0](MODEL_ID)"}},
			containers: []claim{{"s", "spec.containers[0].image"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Scrape(context.Background(), object(t, tt.doc))
			require.NoError(t, err)
			rt, fw, md, da, cs := claims(f)
			sortClaims(md)
			require.Equal(t, tt.runtimes, rt, "runtimes")
			require.Equal(t, tt.frameworks, fw, "frameworks")
			require.Equal(t, tt.models, md, "models")
			require.Equal(t, tt.data, da, "data")
			require.Equal(t, tt.containers, cs, "containers")
			if len(f.Containers)+len(f.Models)+len(f.Data) > 0 {
				require.Equal(t, []adapter.Scraper{podtemplate.Scraper()}, f.Scrapers)
			}
		})
	}
}

func sortClaims(c []claim) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && strings.ToLower(c[j].name+c[j].locator) < strings.ToLower(c[j-1].name+c[j-1].locator); j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

func TestKindFramework(t *testing.T) {
	for kind, want := range map[string]string{
		"TFJob": "tensorflow", "JAXJob": "jax", "XGBoostJob": "xgboost", "PaddleJob": "paddlepaddle", "MXJob": "mxnet",
		"MPIJob": "mpi", "PyTorchJob": "pytorch", "HorovodJob": "horovod", "XGBoostTrainingJob": "xgboost", "MindSporeJob": "mindspore",
		"Job": "", "RayJob": "", "TrainJob": "", "TrainingJob": "", "Deployment": "",
	} {
		got, ok := KindFramework(kind)
		require.Equal(t, want != "", ok, kind)
		require.Equal(t, want, got, kind)
	}
}

func TestScrapeBounded(t *testing.T) {
	// A spec deeper than MaxDepth is not searched below it; one wider than
	// MaxNodes is an error, not a hang.
	deep := map[string]any{"containers": []any{map[string]any{"name": "x", "image": "vllm/vllm-openai:v1.0"}}}
	for i := 0; i < MaxDepth+2; i++ {
		deep = map[string]any{"next": deep}
	}
	f, err := Scrape(context.Background(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x/v1", "kind": "Deep", "spec": deep}})
	require.NoError(t, err)
	require.Empty(t, f.Containers)

	wide := make([]any, MaxNodes+1)
	for i := range wide {
		wide[i] = map[string]any{}
	}
	_, err = Scrape(context.Background(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x/v1", "kind": "Wide", "spec": map[string]any{"l": wide}}})
	require.ErrorContains(t, err, "more than")
}
