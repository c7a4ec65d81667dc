package podtemplate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseImage(t *testing.T) {
	const dg = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		ref, repo, tag, digest string
	}{
		{"", "", "", ""},
		{"   ", "", "", ""},
		{"nginx", "docker.io/library/nginx", "", ""},
		{"nginx:1.27", "docker.io/library/nginx", "1.27", ""},
		{"library/nginx:1.27", "docker.io/library/nginx", "1.27", ""},
		{"docker.io/nginx", "docker.io/library/nginx", "", ""},
		{"docker.io/library/nginx", "docker.io/library/nginx", "", ""},
		{"index.docker.io/library/nginx:latest", "docker.io/library/nginx", "latest", ""},
		{"registry-1.docker.io/vllm/vllm-openai", "docker.io/vllm/vllm-openai", "", ""},
		{"Docker.IO/vllm/vllm-openai", "docker.io/vllm/vllm-openai", "", ""},
		{"vllm/vllm-openai:v0.6.3", "docker.io/vllm/vllm-openai", "v0.6.3", ""},
		{"vllm/vllm-openai@" + dg, "docker.io/vllm/vllm-openai", "", dg},
		{"vllm/vllm-openai:v0.6.3@" + dg, "docker.io/vllm/vllm-openai", "v0.6.3", dg},
		{"localhost:5000/team/img:dev", "localhost:5000/team/img", "dev", ""},
		{"localhost/img", "localhost/img", "", ""},
		{"nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", "nvcr.io/nim/meta/llama-3.1-8b-instruct", "1.3.3", ""},
		{"ghcr.io/huggingface/text-generation-inference:2.4.0", "ghcr.io/huggingface/text-generation-inference", "2.4.0", ""},
		{"my.registry:5000/img", "my.registry:5000/img", "", ""},
		{"  vllm/vllm-openai:latest\n", "docker.io/vllm/vllm-openai", "latest", ""},
		{":tag", "", "tag", ""},
		{"@sha256:abc", "", "", "sha256:abc"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			repo, tag, digest := ParseImage(tt.ref)
			require.Equal(t, tt.repo, repo)
			require.Equal(t, tt.tag, tag)
			require.Equal(t, tt.digest, digest)
		})
	}
}

func TestRuntimeFromImage(t *testing.T) {
	const dg = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		image, name, version string
		ok                   bool
	}{
		// vllm
		{"vllm/vllm-openai:v0.6.3", "vllm", "v0.6.3", true},
		{"docker.io/vllm/vllm-openai:v0.6.3", "vllm", "v0.6.3", true},
		{"index.docker.io/vllm/vllm-openai:0.6.3", "vllm", "0.6.3", true},
		{"vllm/vllm-openai:latest", "vllm", "", true},
		{"vllm/vllm-openai:nightly", "vllm", "", true},
		{"vllm/vllm-openai@" + dg, "vllm", "", true},
		{"rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4", "vllm", "", true},
		{"rocm/vllm-dev:main", "vllm", "", true},
		{"nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.3.2", "vllm", "0.3.2", true},
		{"myregistry.example/vllm-openai:v0.6.3", "", "", false},
		{"example.com/notvllm/x", "", "", false},
		{"example.com/vllm/vllm-openai", "", "", false},
		{"vllm", "", "", false},
		{"rocm/vllm-other-thing", "", "", false},
		{"rocm/pytorch", "", "", false},
		// sglang
		{"lmsysorg/sglang:v0.4.1-cu124", "sglang", "v0.4.1-cu124", true},
		{"nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.3.2", "sglang", "0.3.2", true},
		{"lmsysorg/sglang-router", "", "", false},
		// tensorrt-llm
		{"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.3.2", "tensorrt-llm", "0.3.2", true},
		{"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime-x", "", "", false},
		// triton
		{"nvcr.io/nvidia/tritonserver:24.08-py3", "triton", "24.08-py3", true},
		{"nvcr.io/nvidia/tritonserver-custom:24.08-py3", "", "", false},
		// nim
		{"nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", "nim", "1.3.3", true},
		{"nvcr.io/nim", "", "", false},
		{"nvcr.io/nimble/x", "", "", false},
		// tgi, tei
		{"ghcr.io/huggingface/text-generation-inference:2.4.0", "tgi", "2.4.0", true},
		{"huggingface/text-generation-inference:1.4", "tgi", "1.4", true},
		{"ghcr.io/huggingface/text-embeddings-inference:1.5", "tei", "1.5", true},
		{"ghcr.io/huggingface/text-embeddings-inference:cpu-1.5", "tei", "", true},
		{"ghcr.io/huggingface/transformers", "", "", false},
		// ollama
		{"ollama/ollama:0.5.7", "ollama", "0.5.7", true},
		{"ollama/ollama-helper", "", "", false},
		// ray-serve
		{"rayproject/ray:2.9.0-py310-gpu", "ray-serve", "2.9.0-py310-gpu", true},
		{"rayproject/ray-ml:2.9.0", "ray-serve", "2.9.0", true},
		{"rayproject/kuberay", "", "", false},
		// llm-d
		{"ghcr.io/llm-d/llm-d:v0.2.0", "llm-d", "v0.2.0", true},
		{"ghcr.io/llm-d-fork/llm-d", "", "", false},
		// lmdeploy, litellm, llama.cpp
		{"openmmlab/lmdeploy:v0.6.0-cu12", "lmdeploy", "v0.6.0-cu12", true},
		{"ghcr.io/berriai/litellm:main-v1.55.0", "litellm", "", true},
		{"ghcr.io/ggml-org/llama.cpp:server-cuda", "llama.cpp", "", true},
		{"ghcr.io/ggerganov/llama.cpp:server", "llama.cpp", "", true},
		{"ghcr.io/ggml-org/whisper.cpp", "", "", false},
		// not runtimes
		{"nginx:1.27", "", "", false},
		{"", "", "", false},
		{"busybox", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			name, version, ok := RuntimeFromImage(tt.image)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.name, name)
			require.Equal(t, tt.version, version)
		})
	}
}

func TestVersionTag(t *testing.T) {
	for tag, want := range map[string]bool{
		"v0.6.3": true, "0.6.3": true, "1.12": true, "24.08-py3": true, "0.6.3.post1": true,
		"latest": false, "main": false, "nightly": false, "": false, "1": false, "v1": false,
		"sha256-abc": false, "3f2a9c0e1b": false, "cpu-1.5": false, "1.": false,
	} {
		require.Equal(t, want, versionTag.MatchString(tag), tag)
	}
}
