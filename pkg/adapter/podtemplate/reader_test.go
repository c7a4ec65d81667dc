package podtemplate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Each evidence class of the reader, positive and negative, on small
// command lines written for the test.
func TestReadCommandClasses(t *testing.T) {
	sh := func(script string) []string { return []string{"/bin/sh", "-c", script} }
	tests := []struct {
		name          string
		command, args []string
		env           map[string]string
		image         string
		runtimes      []string
		models        []string // name|source|served
		frameworks    []string
	}{
		{name: "vllm module on a generic image", command: []string{"python3", "-m", "vllm.entrypoints.openai.api_server"}, args: []string{"--model=org/m"},
			runtimes: []string{"vllm"}, models: []string{"org/m||"}},
		{name: "sglang in a script with continuation", command: sh("python3 -m sglang.launch_server \\\n --model-path Qwen/Qwen3-8B --tp 2"),
			runtimes: []string{"sglang"}, models: []string{"Qwen/Qwen3-8B||"}},
		{name: "shell variable from env", command: sh("python3 -m dynamo.vllm --model $MODEL_PATH"), env: map[string]string{"MODEL_PATH": "org/m"},
			runtimes: []string{"dynamo", "vllm"}, models: []string{"org/m||"}},
		{name: "default expansion and hf download", command: sh("M=\"${X:-org/m}\"\nhf download \"$M\" --local-dir /d"),
			models: []string{"org/m||"}},
		{name: "entrypoint takes serve", args: []string{"serve", "org/m"}, image: "vllm", runtimes: []string{"vllm"}, models: []string{"org/m||"}},
		{name: "served name attaches", command: sh("vllm serve org/m --served-model-name m"), runtimes: []string{"vllm"}, models: []string{"org/m||m"}},
		{name: "path is the source", args: []string{"--model", "/mnt/models/llama-3.1-8b/"}, models: []string{"llama-3.1-8b|/mnt/models/llama-3.1-8b/|"}},
		{name: "gguf file", command: []string{"llama-server", "-m", "/models/l3-8B-F16.gguf"}, runtimes: []string{"llama.cpp"}, models: []string{"l3-8B-F16|/models/l3-8B-F16.gguf|"}},
		{name: "hf uri", args: []string{"--model", "hf://org/m"}, models: []string{"org/m|hf://org/m|"}},
		{name: "ollama pull with tag", command: sh("ollama serve & sleep 1; ollama pull mistral:latest"), runtimes: []string{"ollama", "ollama"}, models: []string{"mistral||"}},
		{name: "lm-eval model args", command: []string{"lm_eval", "--model", "hf", "--model_args", "pretrained=org/m,dtype=auto"},
			models: []string{"org/m||"}, frameworks: []string{"lm-evaluation-harness"}},
		{name: "trl with $@", command: []string{"/bin/bash", "-c", "exec trl sft \"$@\"", "--"}, args: []string{"--model_name_or_path=org/m"},
			models: []string{"org/m||"}, frameworks: []string{"trl"}},
		{name: "python heredoc", command: sh("python3 - <<EOF\nsnapshot_download(repo_id=\"org/m\")\nEOF\n"), models: []string{"org/m||"}},
		// negatives
		{name: "placeholder model", args: []string{"--model=$(MODEL)"}, env: map[string]string{"MODEL": "V_MODEL_PATH"}},
		{name: "model repository is not a model", command: []string{"tritonserver", "--model-repository=/models"}, runtimes: []string{"triton"}},
		{name: "sleep is nothing", command: []string{"sleep", "infinity"}},
		{name: "unresolved shell variable", command: sh("vllm serve $UNSET"), runtimes: []string{"vllm"}},
		{name: "line continuation is not a model", command: sh("vllm serve \\\n --port 8000"), runtimes: []string{"vllm"}},
		{name: "client of a server", command: []string{"python3", "client.py", "--url", "http://tgi"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ReadCommand(CommandInput{Command: tt.command, Args: tt.args, Env: tt.env, ContainerPath: "c", ImageRuntime: tt.image})
			var rts, mds, fws []string
			for _, r := range f.Runtimes {
				rts = append(rts, r.Name)
			}
			for _, m := range f.Models {
				mds = append(mds, m.Name+"|"+m.Source+"|"+m.ServedName)
			}
			for _, x := range f.Frameworks {
				fws = append(fws, x.Name)
			}
			require.Equal(t, tt.runtimes, rts, "runtimes")
			require.Equal(t, tt.models, mds, "models")
			require.Equal(t, tt.frameworks, fws, "frameworks")
		})
	}
}

func TestSecretNamesAreNotCounts(t *testing.T) {
	for _, n := range []string{"MAX_TOTAL_TOKENS", "MAX_INPUT_TOKENS", "MAX_BATCH_PREFILL_TOKENS", "TOKENIZER_MODE"} {
		require.False(t, IsSecretName(n), n)
	}
	for _, n := range []string{"HF_TOKEN", "API_TOKEN", "GITHUB_TOKEN_FILE", "DB_PASSWORD"} {
		require.True(t, IsSecretName(n), n)
	}
}

// The quantisation and the task a server's flags declare are its model's;
// a --task of another program, or a value that is not a word, is not.
func TestServerFlagsDescribeTheModel(t *testing.T) {
	f := ReadCommand(CommandInput{Command: []string{"vllm", "serve", "Qwen/Qwen3-8B", "--quantization", "AWQ", "--task", "embed"}, ContainerPath: "c"})
	require.Len(t, f.Models, 1)
	require.Equal(t, "awq", f.Models[0].Quantization)
	require.Equal(t, "embed", f.Models[0].Task)

	f = ReadCommand(CommandInput{Args: []string{"--model-id", "org/m", "--quantize", "bitsandbytes-nf4"}, ImageRuntime: "tgi", ContainerPath: "c"})
	require.Len(t, f.Models, 1)
	require.Equal(t, "bitsandbytes-nf4", f.Models[0].Quantization)
	require.Empty(t, f.Models[0].Task)

	f = ReadCommand(CommandInput{Command: []string{"python", "train.py", "--model", "org/m", "--task", "summarize"}, ContainerPath: "c"})
	require.Len(t, f.Models, 1)
	require.Empty(t, f.Models[0].Task, "--task of a program that is not vLLM says nothing of the model")

	f = ReadCommand(CommandInput{Command: []string{"vllm", "serve", "org/m", "--quantization", "/etc/passwd"}, ContainerPath: "c"})
	require.Empty(t, f.Models[0].Quantization, "a path is not a quantisation method")
}
