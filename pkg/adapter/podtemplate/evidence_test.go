package podtemplate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// names is what a container's findings name, for the evidence-class tables:
// runtimes, frameworks, models (with their served name), data.
type names struct {
	runtimes, frameworks, models, data []string
}

func namesOf(f adapter.Findings) names {
	var n names
	for _, r := range f.Runtimes {
		n.runtimes = append(n.runtimes, r.Name)
	}
	for _, x := range f.Frameworks {
		n.frameworks = append(n.frameworks, x.Name)
	}
	for _, m := range f.Models {
		s := m.Name
		if m.ServedName != "" {
			s += " as " + m.ServedName
		}
		n.models = append(n.models, s)
	}
	for _, d := range f.Data {
		n.data = append(n.data, d.Kind+":"+d.Name)
	}
	return n
}

func env(kv ...string) []any {
	var out []any
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, map[string]any{"name": kv[i], "value": kv[i+1]})
	}
	return out
}

func strs(s ...string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// Each evidence class of issues #27 and #31, positive and negative, read
// from one container.
func TestEvidenceClasses(t *testing.T) {
	tests := []struct {
		name string
		c    map[string]any
		want names
	}{
		// Classic ML frameworks, from images.
		{"tensorflow image", map[string]any{"image": "tensorflow/tensorflow:2.16.1-gpu"}, names{frameworks: []string{"tensorflow"}}},
		{"pytorch image alone", map[string]any{"image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"}, names{frameworks: []string{"pytorch"}}},
		{"ngc pytorch image", map[string]any{"image": "nvcr.io/nvidia/pytorch:24.10-py3"}, names{frameworks: []string{"pytorch"}}},
		{"paddle image", map[string]any{"image": "paddlepaddle/paddle:3.0.0-gpu-cuda12.6"}, names{frameworks: []string{"paddlepaddle"}}},
		{"mindspore image", map[string]any{"image": "swr.example.com/mindspore/mindspore-gpu-cuda11.6:2.2"}, names{frameworks: []string{"mindspore"}}},
		{"horovod image", map[string]any{"image": "horovod/horovod:0.28.1"}, names{frameworks: []string{"horovod"}}},
		{"lm-eval image", map[string]any{"image": "ghcr.io/acme/lm-eval:0.4.8"}, names{frameworks: []string{"lm-evaluation-harness"}}},
		{"ragas image", map[string]any{"image": "quay.io/acme/ragas-runner:1"}, names{frameworks: []string{"ragas"}}},
		{"tensorflow serving is a runtime, not a framework", map[string]any{"image": "tensorflow/serving:2.16.1"}, names{runtimes: []string{"tensorflow-serving"}}},
		{"an operator image is no framework", map[string]any{"image": "kubeflow/pytorch-operator:v1"}, names{}},
		{"a look-alike is no framework", map[string]any{"image": "acme/torchlight:1"}, names{}},
		// From launchers and python modules.
		{"paddle launcher", map[string]any{"image": "acme/trainer:1", "command": strs("python", "-m", "paddle.distributed.launch", "train.py")}, names{frameworks: []string{"paddlepaddle"}}},
		{"horovodrun", map[string]any{"image": "acme/trainer:1", "command": strs("horovodrun", "-np", "4", "python", "train.py")}, names{frameworks: []string{"horovod"}}},
		{"msrun", map[string]any{"image": "acme/trainer:1", "command": strs("msrun", "--worker_num=8", "train.py")}, names{frameworks: []string{"mindspore"}}},
		{"tf.distribute inline", map[string]any{"image": "acme/trainer:1", "command": strs("python", "-c", "import tensorflow as tf; s = tf.distribute.MultiWorkerMirroredStrategy()")}, names{frameworks: []string{"tensorflow"}}},
		{"jax inline", map[string]any{"image": "acme/trainer:1", "command": strs("python3", "-c", "import jax; jax.distributed.initialize()")}, names{frameworks: []string{"jax"}}},
		{"a plain script is no framework", map[string]any{"image": "acme/trainer:1", "command": strs("python", "train.py")}, names{}},
		// From env.
		{"TF_CONFIG", map[string]any{"image": "acme/trainer:1", "env": env("TF_CONFIG", "{}")}, names{frameworks: []string{"tensorflow"}}},
		{"DMLC env is MXNet", map[string]any{"image": "acme/trainer:1", "env": env("DMLC_ROLE", "worker", "DMLC_PS_ROOT_URI", "ps-0")}, names{frameworks: []string{"mxnet"}}},
		{"DMLC tracker env is XGBoost", map[string]any{"image": "acme/trainer:1", "env": env("DMLC_TRACKER_URI", "m-0")}, names{frameworks: []string{"xgboost"}}},
		{"terraform's TF_VAR is no framework", map[string]any{"image": "acme/trainer:1", "env": env("TF_VAR_region", "eu")}, names{}},
		{"framework env on an init container is not read", map[string]any{"image": "acme/trainer:1", "env": env("TF_CONFIG", "{}"), "init": true}, names{}},
		// hf:// arguments.
		{"hf:// positional argument", map[string]any{"image": "acme/job:1", "args": strs("hf://Qwen/Qwen2.5-0.5B")}, names{models: []string{"Qwen/Qwen2.5-0.5B"}}},
		{"hf:// under an unknown flag", map[string]any{"image": "acme/job:1", "args": strs("--base", "hf://Qwen/Qwen2.5-0.5B")}, names{models: []string{"Qwen/Qwen2.5-0.5B"}}},
		{"hf:// dataset flag is data", map[string]any{"image": "acme/job:1", "args": strs("--dataset=hf://tatsu-lab/alpaca")}, names{data: []string{"dataset:tatsu-lab/alpaca"}}},
		{"hf:// output flag is nothing", map[string]any{"image": "acme/job:1", "args": strs("--push-to-hub", "hf://acme/out")}, names{}},
		// Downloads serve nothing.
		{"hf download in a vllm image", map[string]any{"image": "vllm/vllm-openai:v0.8.4", "command": strs("hf", "download", "Qwen/Qwen3-8B")},
			names{models: []string{"Qwen/Qwen3-8B"}}},
		{"NIM download-to-cache", map[string]any{"image": "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", "command": strs("download-to-cache", "--profile", "x")},
			names{models: []string{"meta/llama-3.1-8b-instruct"}}},
		{"NIM serving stays NIM", map[string]any{"image": "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3"},
			names{runtimes: []string{"nim"}, models: []string{"meta/llama-3.1-8b-instruct"}}},
		// Placeholders, outputs and datasets are not models.
		{"YOUR-MODEL-NAME", map[string]any{"image": "acme/x:1", "args": strs("--model", "YOUR-MODEL-NAME")}, names{}},
		{"<model>", map[string]any{"image": "acme/x:1", "args": strs("--model=<model>")}, names{}},
		{"unresolved ${MODEL}", map[string]any{"image": "acme/x:1", "args": strs("--model", "${MODEL}")}, names{}},
		{"a job's output path", map[string]any{"image": "acme/x:1", "args": strs("--model_path=/tmp/out")}, names{}},
		{"a path below the output dir", map[string]any{"image": "acme/x:1", "args": strs("--output_dir", "/ckpt/run1", "--model_path", "/ckpt/run1/final")}, names{}},
		{"a job's input path is a model", map[string]any{"image": "acme/x:1", "args": strs("--model_path=/models/llama-3-8b", "--output_dir=/tmp/out")},
			names{models: []string{"llama-3-8b"}}},
		{"a server's output-looking path is still a model", map[string]any{"image": "vllm/vllm-openai:v0.8.4", "args": strs("--model", "/mnt/output/ft-llama")},
			names{runtimes: []string{"vllm"}, models: []string{"ft-llama"}}},
		{"dataset initializer STORAGE_URI", map[string]any{"name": "dataset-initializer", "image": "ghcr.io/kubeflow/trainer/dataset-initializer:v2.0.0",
			"env": env("STORAGE_URI", "hf://tatsu-lab/alpaca")}, names{data: []string{"dataset:tatsu-lab/alpaca"}}},
		{"model initializer STORAGE_URI is a model", map[string]any{"name": "model-initializer", "image": "ghcr.io/kubeflow/trainer/model-initializer:v2.0.0",
			"env": env("STORAGE_URI", "hf://Qwen/Qwen2.5-1.5B")}, names{models: []string{"Qwen/Qwen2.5-1.5B"}}},
		// Storage URIs name the model by the segment a reader would.
		{"runtime-named last segment", map[string]any{"image": "acme/x:1", "env": env("MODEL_PATH", "s3://models/DeepSeek-V3-W8A8/vllm-ascend")},
			names{models: []string{"DeepSeek-V3-W8A8"}}},
		{"precision last segment", map[string]any{"image": "acme/x:1", "env": env("MODEL_PATH", "/mnt/models/Llama-3.3-70B/fp8")},
			names{models: []string{"Llama-3.3-70B"}}},
		{"a model's own name is kept", map[string]any{"image": "acme/x:1", "env": env("MODEL_PATH", "gs://b/llama-3-8b-vllm")},
			names{models: []string{"llama-3-8b-vllm"}}},
		// A served name and its model are one component.
		{"served name env joins the model", map[string]any{"image": "acme/x:1", "env": env("MODEL_ID", "Qwen/Qwen3-8B", "SERVED_MODEL_NAME", "qwen")},
			names{models: []string{"Qwen/Qwen3-8B as qwen", "Qwen/Qwen3-8B as qwen"}}},
		{"served name env alone is a model", map[string]any{"image": "acme/x:1", "env": env("SERVED_MODEL_NAME", "qwen")},
			names{models: []string{"qwen"}}},
		// Ray.
		{"ray image is ray", map[string]any{"image": "rayproject/ray:2.44.1-py311", "command": strs("python", "batch.py")}, names{runtimes: []string{"ray"}}},
		{"serve run is ray serve", map[string]any{"image": "rayproject/ray:2.44.1-py311", "command": strs("serve", "run", "app:deployment")},
			names{runtimes: []string{"ray", "ray-serve"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := map[string]any{"name": "main"}
			init := false
			for k, v := range tt.c {
				if k == "init" {
					init = true
					continue
				}
				c[k] = v
			}
			f, err := ScrapeContainer(c, "spec.containers[0]", ContainerOptions{Init: init})
			require.NoError(t, err)
			require.Equal(t, tt.want, namesOf(f))
		})
	}
}

// Every framework claim is located exactly.
func TestFrameworkLocators(t *testing.T) {
	c := map[string]any{"name": "main", "image": "tensorflow/tensorflow:2.16.1", "env": env("PATH", "/bin", "TF_CONFIG", "{}"),
		"command": strs("python", "-m", "paddle.distributed.launch", "x.py")}
	f, err := ScrapeContainer(c, "spec.template.spec.containers[0]", ContainerOptions{})
	require.NoError(t, err)
	require.Equal(t, []adapter.Framework{
		{Name: "tensorflow", Purpose: adapter.PurposeTraining, Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: "spec.template.spec.containers[0].image"}},
		{Name: "paddlepaddle", Purpose: adapter.PurposeTraining, Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceContainerCommand, Locator: "spec.template.spec.containers[0].command[2](paddle.distributed.launch)"}},
		{Name: "tensorflow", Purpose: adapter.PurposeTraining, Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: "spec.template.spec.containers[0].env[1](TF_CONFIG)"}},
	}, f.Frameworks)
}

func TestJoinServedNames(t *testing.T) {
	ev := adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.model"}
	models := []adapter.Model{
		{Name: "DeepSeek-V3", Source: "s3://b/DeepSeek-V3", ServedName: "ds", Evidence: ev},
		{Name: "ds", Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: "args[1](--served-model-name)"}},
		{Name: "other"},
	}
	JoinServedNames(models)
	require.Equal(t, "DeepSeek-V3", models[1].Name)
	require.Equal(t, "ds", models[1].ServedName)
	require.Equal(t, "s3://b/DeepSeek-V3", models[1].Source)
	require.Equal(t, "other", models[2].Name)

	// A served name two models share is not joined.
	shared := []adapter.Model{{Name: "a", ServedName: "s"}, {Name: "b", ServedName: "s"}, {Name: "s"}}
	JoinServedNames(shared)
	require.Equal(t, "s", shared[2].Name)
}

func TestFrameworkLabels(t *testing.T) {
	tmpl := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"job-type": "Horovod", "example.com/framework": "paddle", "app": "tensorflow"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "w", "image": "acme/w:1"}}},
	}
	f, err := ScrapeTemplate(tmpl, "spec.template", Options{})
	require.NoError(t, err)
	require.Equal(t, []adapter.Framework{
		{Name: "paddlepaddle", Purpose: adapter.PurposeTraining, Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourcePodTemplateLabel, Locator: "spec.template.metadata.labels[example.com/framework]"}},
		{Name: "horovod", Purpose: adapter.PurposeTraining, Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourcePodTemplateLabel, Locator: "spec.template.metadata.labels[job-type]"}},
	}, f.Frameworks)
}
