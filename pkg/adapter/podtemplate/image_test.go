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
		{"@sha256:abc", "", "", ""}, // a malformed digest is none
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

func TestReadImage(t *testing.T) {
	const dg = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	type ir = ImageRuntime
	tests := []struct {
		image string
		want  ImageRuntime
		ok    bool
	}{
		// vllm: the publisher's images are versioned by their tag
		{"vllm/vllm-openai:v0.6.3", ir{Name: "vllm", Version: "v0.6.3"}, true},
		{"docker.io/vllm/vllm-openai:v0.6.3", ir{Name: "vllm", Version: "v0.6.3"}, true},
		{"index.docker.io/vllm/vllm-openai:0.6.3", ir{Name: "vllm", Version: "0.6.3"}, true},
		{"vllm/vllm-openai:latest", ir{Name: "vllm"}, true},
		{"vllm/vllm-openai@" + dg, ir{Name: "vllm"}, true},
		{"rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4", ir{Name: "vllm"}, true},
		// mirrors, rebuilds and siblings: the runtime, never a version
		{"myregistry.example/vllm-openai:v0.6.3", ir{Name: "vllm"}, true},
		{"ghcr.io/acme/vllm:1.0", ir{Name: "vllm"}, true},
		{"quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.2", ir{Name: "vllm"}, true},
		{"lmsysorg/sglang-cpu:latest", ir{Name: "sglang"}, true},
		{"registry.example/sglang-nightly", ir{Name: "sglang"}, true},
		{"us-docker.pkg.dev/x/gcr.io/huggingface-text-generation-inference-cu124.2-3.ubuntu2204.py311", ir{Name: "tgi"}, true},
		{"us-docker.pkg.dev/x/huggingface-text-embeddings-inference-cpu.1-4:latest", ir{Name: "tei"}, true},
		{"us-docker.pkg.dev/x/tf-serving-tpu:2.13.0", ir{Name: "tensorflow-serving"}, true},
		{"us-docker.pkg.dev/x/torchserve-tpu:v0.8.2", ir{Name: "torchserve"}, true},
		{"quay.io/rh-aiservices-bu/ollama-ubi9:0.2.8", ir{Name: "ollama"}, true},
		{"quay.io/go-skynet/local-ai:master-cublas-cuda12", ir{Name: "localai"}, true},
		{"us-docker.pkg.dev/x/maxengine-server:v0.2.2", ir{Name: "jetstream"}, true},
		// platforms: the tag is the platform's version; the engine has none
		{"nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.3.2", ir{Name: "dynamo", Version: "0.3.2", Platform: true, Engine: "vllm"}, true},
		{"nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.3.2", ir{Name: "dynamo", Version: "0.3.2", Platform: true, Engine: "sglang"}, true},
		{"nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.3.2", ir{Name: "dynamo", Version: "0.3.2", Platform: true, Engine: "tensorrt-llm"}, true},
		{"nvcr.io/nvidia/ai-dynamo/dynamo-frontend:0.3.2", ir{Name: "dynamo", Version: "0.3.2", Platform: true}, true},
		{"nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", ir{Name: "nim", Version: "1.3.3", Platform: true}, true},
		// others
		{"nvcr.io/nvidia/tritonserver:24.08-py3", ir{Name: "triton", Version: "24.08-py3"}, true},
		{"ghcr.io/huggingface/text-generation-inference:2.4.0", ir{Name: "tgi", Version: "2.4.0"}, true},
		{"ghcr.io/huggingface/text-embeddings-inference:cpu-1.5", ir{Name: "tei"}, true},
		{"ollama/ollama:0.5.7", ir{Name: "ollama", Version: "0.5.7"}, true},
		// A Ray image runs Ray; Ray Serve only where a serve config or "serve run" says so.
		{"rayproject/ray:2.9.0-py310-gpu", ir{Name: "ray", Platform: true}, true},
		{"anyscale/ray-llm:2.9.0", ir{Name: "ray-serve", Version: "2.9.0"}, true},
		{"ghcr.io/llm-d/llm-d:v0.2.0", ir{Name: "llm-d", Version: "v0.2.0"}, true},
		{"ghcr.io/llm-d/llm-d-inference-sim:latest", ir{Name: "llm-d-inference-sim"}, true},
		{"openmmlab/lmdeploy:v0.6.0-cu12", ir{Name: "lmdeploy", Version: "v0.6.0-cu12"}, true},
		{"ghcr.io/ggml-org/llama.cpp:server-cuda", ir{Name: "llama.cpp"}, true},
		// not runtimes: clients, SDKs, test doubles, routers, look-alikes
		{"nvcr.io/nvidia/tritonserver:26.06-py3-sdk", ir{}, false},
		{"ghcr.io/vllm-project/semantic-router/mock-vllm:latest", ir{}, false},
		{"quay.io/x/gradio-rag-vllm-pgvector:0.0.1", ir{}, false},
		{"lmsysorg/sglang-router", ir{}, false},
		{"registry.example/vllm-benchmark-client", ir{}, false},
		{"example.com/notvllm/x", ir{}, false},
		{"ghcr.io/huggingface/transformers", ir{}, false},
		{"ghcr.io/ggml-org/whisper.cpp", ir{}, false},
		{"nvcr.io/nimble/x", ir{}, false},
		{"rayproject/kuberay", ir{}, false},
		{"rocm/pytorch", ir{}, false},
		{"nginx:1.27", ir{}, false},
		{"busybox", ir{}, false},
		{"", ir{}, false},
		{"<image>", ir{}, false},
		{"V_IMAGE_URL", ir{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			got, ok := ReadImage(tt.image)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
			name, version, ok := RuntimeFromImage(tt.image)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want.Name, name)
			require.Equal(t, tt.want.Version, version)
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
