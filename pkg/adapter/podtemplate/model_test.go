package podtemplate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

const cp = "spec.template.spec.containers[0]"

func TestModelFromArgs(t *testing.T) {
	decl := func(name, loc string) adapter.Model {
		return adapter.Model{Name: name, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: cp + loc}}
	}
	declCmd := func(name, loc string) adapter.Model {
		return adapter.Model{Name: name, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceContainerCommand, Locator: cp + loc}}
	}
	inf := func(name, loc string, src adapter.Source) adapter.Model {
		return adapter.Model{Name: name, Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: src, Locator: cp + loc}}
	}
	tests := []struct {
		name          string
		command, args []string
		env           map[string]string
		want          []adapter.Model
		redactions    []adapter.Redaction
	}{
		{name: "none"},
		{name: "flag space", args: []string{"--port", "8000", "--model", "meta-llama/Llama-3.1-8B-Instruct"},
			want: []adapter.Model{decl("meta-llama/Llama-3.1-8B-Instruct", ".args[2](--model)")}},
		{name: "flag equals", args: []string{"--host=0.0.0.0", "--tp=2", "--x", "--model=Qwen/Qwen2.5-7B"},
			want: []adapter.Model{decl("Qwen/Qwen2.5-7B", ".args[3](--model)")}},
		{name: "all flags", args: []string{"--model-id", "a", "--model-path=b", "--model_name_or_path", "c", "--model-name=d", "--hf-model", "e"},
			want: []adapter.Model{
				decl("a", ".args[0](--model-id)"), decl("b", ".args[2](--model-path)"), decl("c", ".args[3](--model-name-or-path)"),
				decl("d", ".args[5](--model-name)"), decl("e", ".args[6](--hf-model)"),
			}},
		{name: "served name of the model", args: []string{"--model", "org/m", "--served-model-name", "m"},
			want: []adapter.Model{{Name: "org/m", ServedName: "m", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: cp + ".args[0](--model)"}}}},
		{name: "served name alone", args: []string{"--served-model-name", "m", "--port", "1"},
			want: []adapter.Model{decl("m", ".args[0](--served-model-name)")}},
		{name: "model repository is storage", args: []string{"--model-repository", "/models"}},
		{name: "unlisted flag", args: []string{"--model-foo", "x", "--model-foo=y", "--modelx", "z", "-model", "w", "--models", "v"}},
		{name: "flag without value at end", args: []string{"--model"}},
		{name: "flag followed by flag", args: []string{"--model", "--port", "8000"}},
		{name: "empty equals", args: []string{"--model=", "--model=  "}},
		{name: "in command", command: []string{"python3", "-m", "sglang.launch_server", "--model-path", "/models/llama"},
			want: []adapter.Model{{Name: "llama", Source: "/models/llama", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceContainerCommand, Locator: cp + ".command[3](--model-path)"}}}},
		{name: "flag in command value in args", command: []string{"text-generation-launcher", "--model-id"}, args: []string{"bigscience/bloom-560m"},
			want: []adapter.Model{declCmd("bigscience/bloom-560m", ".command[1](--model-id)")}},
		{name: "shell script", command: []string{"/bin/sh", "-c", "pip list && vllm serve --model 'mistralai/Mistral-7B' --port 8000"},
			want: []adapter.Model{declCmd("mistralai/Mistral-7B", ".command[2](--model)")}},
		{name: "vllm serve positional", command: []string{"vllm", "serve"}, args: []string{"meta-llama/Llama-3.2-1B", "--port", "8000"},
			want: []adapter.Model{inf("meta-llama/Llama-3.2-1B", ".args[0](vllm serve)", adapter.SourceContainerArg)}},
		{name: "vllm serve full path", command: []string{"/usr/local/bin/vllm", "serve", "org/m"},
			want: []adapter.Model{inf("org/m", ".command[2](vllm serve)", adapter.SourceContainerCommand)}},
		{name: "vllm serve flag only", command: []string{"vllm", "serve", "--model", "org/m"},
			want: []adapter.Model{declCmd("org/m", ".command[2](--model)")}},
		{name: "vllm without serve", command: []string{"vllm", "bench", "org/m"}},
		{name: "kube var expanded", args: []string{"--model", "$(MODEL_ID)"}, env: map[string]string{"MODEL_ID": "org/m"},
			want: []adapter.Model{decl("org/m", ".args[0](--model)")}},
		{name: "kube var unresolved", args: []string{"--model", "$(MODEL_ID)"}},
		{name: "shell var skipped", command: []string{"sh", "-c", "vllm serve --model $MODEL"}},
		{name: "token in model", args: []string{"--model", "https://user:" + tokHF + "@hf.example/m"},
			want:       []adapter.Model{{Name: "m", Source: "https://REDACTED@hf.example/m", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: cp + ".args[0](--model)"}}},
			redactions: []adapter.Redaction{{Locator: cp + ".args[0](--model)", Reason: ReasonURLCredentials}}},
		{name: "unicode", args: []string{"--model", "组织/模型-7B"}, want: []adapter.Model{decl("组织/模型-7B", ".args[0](--model)")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			models, reds := ModelFromArgs(tt.command, tt.args, tt.env, cp)
			require.Equal(t, tt.want, models)
			require.Equal(t, tt.redactions, reds)
		})
	}
}

func TestIsModelPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/models": true, "/models/": true, "/models/llama": true, "/model": true, "/weights": true,
		"/checkpoints/step-100": true, "/hf_cache": true, "/root/.cache/huggingface": true, "//models": true,
		"/root/.cache/huggingface/hub": true,
		"/models-shared":               false, "/modelsx": false, "/data/models": false, "/": false, "": false,
		"models": false, "/weights2": false, "/root/.cache": false, "/root/.cache/huggingface-x": false,
	} {
		require.Equal(t, want, IsModelPath(p), p)
	}
}

func TestModelsFromAnnotations(t *testing.T) {
	const prefix = "metadata.annotations"
	model := func(name, version, key string) adapter.Model {
		return adapter.Model{Name: name, Version: version, Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceWorkloadAnnotation, Locator: prefix + "[" + key + "]"}}
	}
	tests := []struct {
		name       string
		ann        map[string]string
		want       []adapter.Model
		redactions []adapter.Redaction
	}{
		{name: "nil"},
		{name: "unrelated", ann: map[string]string{"model.aibom.dev": "x", "aibom.dev/model": "y", "x.model.aibom.dev/a": "z", "model.aibom.dev/": "w"}},
		{name: "sorted", ann: map[string]string{"model.aibom.dev/z": "org/z", "model.aibom.dev/a": "org/a"},
			want: []adapter.Model{model("org/a", "", "model.aibom.dev/a"), model("org/z", "", "model.aibom.dev/z")}},
		{name: "version", ann: map[string]string{"model.aibom.dev/name": "meta-llama/Llama-3.1-8B-Instruct@main"},
			want: []adapter.Model{model("meta-llama/Llama-3.1-8B-Instruct", "main", "model.aibom.dev/name")}},
		{name: "bad version kept in name", ann: map[string]string{"model.aibom.dev/name": "org/m@v1/x"},
			want: []adapter.Model{model("org/m@v1/x", "", "model.aibom.dev/name")}},
		{name: "leading at", ann: map[string]string{"model.aibom.dev/name": "@v1"},
			want: []adapter.Model{model("@v1", "", "model.aibom.dev/name")}},
		{name: "empty value", ann: map[string]string{"model.aibom.dev/name": "  "}},
		{name: "url creds not split", ann: map[string]string{"model.aibom.dev/name": "https://u:p@host.example/m"},
			want:       []adapter.Model{model("https://REDACTED@host.example/m", "", "model.aibom.dev/name")},
			redactions: []adapter.Redaction{{Locator: prefix + "[model.aibom.dev/name]", Reason: ReasonURLCredentials}}},
		{name: "secret key", ann: map[string]string{"model.aibom.dev/hf-token": tokHF},
			redactions: []adapter.Redaction{{Locator: prefix + "[model.aibom.dev/hf-token]", Reason: ReasonSecretName}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			models, reds := ModelsFromAnnotations(tt.ann, prefix, adapter.SourceWorkloadAnnotation)
			require.Equal(t, tt.want, models)
			require.Equal(t, tt.redactions, reds)
		})
	}
}
