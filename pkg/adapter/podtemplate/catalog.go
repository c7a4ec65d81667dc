package podtemplate

import (
	"path"
	"regexp"
	"strings"
)

// This file is the catalogue of what names a serving runtime, a serving
// platform or an evaluation/training framework: image repositories, programs
// and Python modules, env var prefixes, and pod template labels. The rules
// that read a container apply it (runtime.go, command.go).

// imageRule names the runtime an image repository runs.
type imageRule struct {
	runtime string
	// platform marks a serving platform image (Dynamo, NIM): the tag is the
	// platform's version, and engine, when set, is the engine it runs,
	// reported without a version.
	platform bool
	engine   string
	// repo is a normalised repository (see ParseImage); with prefix, any
	// repository below it matches.
	repo   string
	prefix bool
	// official marks the publisher's own repository: only there does a
	// version-like tag version the runtime.
	official bool
}

// imageRules are anchored on a registry and namespace: the publishers' own
// repositories and the platforms' runtime images. They are tried before the
// repository-name rules below.
var imageRules = []imageRule{
	{runtime: "dynamo", platform: true, engine: "vllm", repo: "nvcr.io/nvidia/ai-dynamo/vllm-runtime", official: true},
	{runtime: "dynamo", platform: true, engine: "sglang", repo: "nvcr.io/nvidia/ai-dynamo/sglang-runtime", official: true},
	{runtime: "dynamo", platform: true, engine: "tensorrt-llm", repo: "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime", official: true},
	{runtime: "dynamo", platform: true, repo: "nvcr.io/nvidia/ai-dynamo/", prefix: true, official: true},
	{runtime: "nim", platform: true, repo: "nvcr.io/nim/", prefix: true, official: true},
	{runtime: "vllm", repo: "docker.io/vllm/", prefix: true, official: true},
	{runtime: "vllm", repo: "docker.io/rocm/vllm", official: true},
	{runtime: "vllm", repo: "docker.io/rocm/vllm-dev", official: true},
	{runtime: "sglang", repo: "docker.io/lmsysorg/sglang", official: true},
	{runtime: "triton", repo: "nvcr.io/nvidia/tritonserver", official: true},
	{runtime: "tensorrt-llm", repo: "nvcr.io/nvidia/tensorrt-llm/", prefix: true, official: true},
	{runtime: "tgi", repo: "docker.io/huggingface/text-generation-inference", official: true},
	{runtime: "tgi", repo: "ghcr.io/huggingface/text-generation-inference", official: true},
	{runtime: "tei", repo: "ghcr.io/huggingface/text-embeddings-inference", official: true},
	{runtime: "ollama", repo: "docker.io/ollama/ollama", official: true},
	{runtime: "ray-serve", repo: "docker.io/rayproject/ray", official: true},
	{runtime: "ray-serve", repo: "docker.io/rayproject/ray-ml", official: true},
	{runtime: "ray-serve", repo: "docker.io/anyscale/ray-llm", official: true},
	{runtime: "llm-d-inference-sim", repo: "ghcr.io/llm-d/llm-d-inference-sim", official: true},
	{runtime: "llm-d", repo: "ghcr.io/llm-d/", prefix: true, official: true},
	{runtime: "lmdeploy", repo: "docker.io/openmmlab/lmdeploy", official: true},
	{runtime: "litellm", repo: "ghcr.io/berriai/litellm", official: true},
	{runtime: "llama.cpp", repo: "ghcr.io/ggml-org/llama.cpp", official: true},
	{runtime: "llama.cpp", repo: "ghcr.io/ggerganov/llama.cpp", official: true},
	{runtime: "tensorflow-serving", repo: "docker.io/tensorflow/serving", official: true},
	{runtime: "torchserve", repo: "docker.io/pytorch/torchserve", official: true},
	{runtime: "ovms", repo: "docker.io/openvino/model_server", official: true},
	{runtime: "mlserver", repo: "docker.io/seldonio/mlserver", official: true},
	{runtime: "localai", repo: "quay.io/go-skynet/local-ai", official: true},
	{runtime: "localai", repo: "docker.io/localai/localai", official: true},
	{runtime: "xinference", repo: "docker.io/xprobe/xinference", official: true},
}

// nameRule names the runtime of a repository by its last path segment, in
// any registry or organisation: a mirror ("ghcr.io/acme/vllm"), a rebuild
// ("quay.io/x/vllm-openai-ubi9") or a sibling ("sglang-cpu"). The segment
// must equal a name or start with it followed by "-", "_" or "."; a segment
// holding one of nameRuleExclusions is never a runtime.
type nameRule struct {
	runtime string
	names   []string
}

var nameRules = []nameRule{
	{"vllm", []string{"vllm"}},
	{"sglang", []string{"sglang"}},
	{"tgi", []string{"text-generation-inference", "huggingface-text-generation-inference", "tgi", "tgis", "optimum-tpu"}},
	{"tei", []string{"text-embeddings-inference", "huggingface-text-embeddings-inference", "tei"}},
	{"triton", []string{"tritonserver", "triton-server", "triton-inference-server"}},
	{"tensorrt-llm", []string{"tensorrt-llm", "tensorrt_llm", "trtllm"}},
	{"ollama", []string{"ollama"}},
	{"torchserve", []string{"torchserve"}},
	{"tensorflow-serving", []string{"tf-serving", "tensorflow-serving", "tfserving"}},
	{"lmdeploy", []string{"lmdeploy"}},
	{"llama.cpp", []string{"llama.cpp", "llamacpp", "llama-cpp", "llama-server"}},
	{"localai", []string{"local-ai", "localai"}},
	{"deepsparse", []string{"deepsparse"}},
	{"saxml", []string{"sax-model-server", "saxml"}},
	{"jetstream", []string{"jetstream", "jetstream-http", "maxengine-server", "jetstream-pytorch"}},
	{"mlserver", []string{"mlserver"}},
	{"ovms", []string{"ovms", "openvino-model-server"}},
	{"ray-serve", []string{"ray-llm", "ray-serve"}},
	{"llm-katan", []string{"llm-katan"}},
	{"caikit", []string{"caikit-tgis-serving", "caikit-nlp", "caikit"}},
	{"xinference", []string{"xinference"}},
	{"kserve-huggingfaceserver", []string{"huggingfaceserver"}},
}

// nameRuleExclusions mark images that carry a server's name but are not the
// server: clients, SDKs, benchmarks, test doubles, routers and exporters.
var nameRuleExclusions = []string{
	"client", "sdk", "bench", "mock", "fake", "test", "router", "proxy",
	"gateway", "exporter", "operator", "controller", "ui", "web", "dashboard",
}

// tagExclusions mark tags of a server's image that hold its client tools,
// not the server (Triton's "-py3-sdk").
var tagExclusions = []string{"sdk", "client"}

// programRule names what a program or Python module runs. module matches a
// "python -m" module exactly, or any module below it when it ends in ".";
// program matches the base name of the command. sub, when set, requires the
// word after the program to be one of them ("vllm serve", "ollama serve").
type programRule struct {
	runtime  string
	platform bool
	engine   string
	// framework and purpose are set instead of runtime for evaluation and
	// training frameworks.
	framework string
	purpose   string
	programs  []string
	modules   []string
	sub       []string
}

var programRules = []programRule{
	{runtime: "dynamo", platform: true, engine: "vllm", modules: []string{"dynamo.vllm"}},
	{runtime: "dynamo", platform: true, engine: "sglang", modules: []string{"dynamo.sglang"}},
	{runtime: "dynamo", platform: true, engine: "tensorrt-llm", modules: []string{"dynamo.trtllm"}},
	{runtime: "dynamo", platform: true, modules: []string{"dynamo.frontend", "dynamo.planner", "dynamo.mocker", "dynamo.router", "dynamo."}},
	{runtime: "vllm", programs: []string{"vllm"}, sub: []string{"serve"}},
	{runtime: "vllm", modules: []string{"vllm.entrypoints."}},
	{runtime: "sglang", modules: []string{"sglang.launch_server", "sglang.launch_server_llavavid", "sglang_router.launch_server", "sglang_router.launch_router", "sglang.srt."}},
	{runtime: "sglang", programs: []string{"sglang"}, sub: []string{"serve"}},
	{runtime: "tgi", programs: []string{"text-generation-launcher", "text-generation-server"}},
	{runtime: "tei", programs: []string{"text-embeddings-router"}},
	{runtime: "triton", programs: []string{"tritonserver"}},
	{runtime: "tensorrt-llm", programs: []string{"trtllm-serve"}},
	{runtime: "torchserve", programs: []string{"torchserve"}},
	{runtime: "ollama", programs: []string{"ollama"}, sub: []string{"serve", "run", "pull"}},
	{runtime: "llama.cpp", programs: []string{"llama-server", "llama-cli", "llama.cpp"}},
	{runtime: "llama.cpp", modules: []string{"llama_cpp.server"}},
	{runtime: "lmdeploy", programs: []string{"lmdeploy"}, sub: []string{"serve"}},
	{runtime: "lmdeploy", modules: []string{"lmdeploy.serve."}},
	{runtime: "jetstream", programs: []string{"jetstream", "maxengine_server", "maxengine-server"}},
	{runtime: "jetstream", modules: []string{"jetstream.", "jetstream_pt.", "maxengine_server"}},
	{runtime: "ray-serve", programs: []string{"serve"}, sub: []string{"run", "deploy", "start"}},
	{runtime: "ray-serve", modules: []string{"ray.serve."}},
	{runtime: "mlserver", programs: []string{"mlserver"}, sub: []string{"start"}},
	{runtime: "deepsparse", programs: []string{"deepsparse.server", "deepsparse.openai_server"}},
	{runtime: "deepsparse", modules: []string{"deepsparse.server"}},
	{runtime: "tensorflow-serving", programs: []string{"tensorflow_model_server"}},
	{runtime: "ovms", programs: []string{"ovms"}},
	{runtime: "localai", programs: []string{"local-ai"}},
	{runtime: "xinference", programs: []string{"xinference-local", "xinference"}},
	{framework: "lm-evaluation-harness", purpose: "evaluation", programs: []string{"lm_eval", "lm-eval"}, modules: []string{"lm_eval"}},
	{framework: "torchrun", purpose: "training", programs: []string{"torchrun"}, modules: []string{"torch.distributed.run", "torch.distributed.launch"}},
	{framework: "accelerate", purpose: "training", programs: []string{"accelerate"}, sub: []string{"launch"}},
	{framework: "deepspeed", purpose: "training", programs: []string{"deepspeed"}},
	{framework: "trl", purpose: "training", programs: []string{"trl"}},
	{framework: "llama-factory", purpose: "training", programs: []string{"llamafactory-cli"}, sub: []string{"train"}},
	{framework: "torchtune", purpose: "training", programs: []string{"tune"}, sub: []string{"run"}},
}

// envPrefixRules name a runtime from the env vars only it reads
// ("VLLM_ATTENTION_BACKEND"). Names that point at a remote server (an URL,
// an endpoint) are a client's and do not count.
var envPrefixRules = []struct{ prefix, runtime string }{
	{"VLLM_", "vllm"},
	{"SGLANG_", "sglang"},
	{"LLAMA_ARG_", "llama.cpp"},
}

var envClientWords = []string{"URL", "ENDPOINT", "API_BASE", "BASE", "ADDR"}

// labelRuntimes maps the values of well-known pod template labels that
// serving platforms set to the runtime they name.
var runtimeLabels = []string{"ai.gke.io/inference-server", "app.kubernetes.io/component", "app.kubernetes.io/name"}

// runtimeFromName maps a label value, or any other free-text name of a
// server, to a runtime: the value must be exactly one of the names of
// nameRules (or the runtime's own name).
func runtimeFromName(v string) (string, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return "", false
	}
	for _, r := range nameRules {
		if v == r.runtime {
			return r.runtime, true
		}
		for _, n := range r.names {
			if v == n {
				return r.runtime, true
			}
		}
	}
	return "", false
}

var pythonProgram = regexp.MustCompile(`^python[0-9.]*$`)

// isPython reports whether a program is a Python interpreter.
func isPython(prog string) bool { return pythonProgram.MatchString(path.Base(prog)) }

// shells are the programs whose "-c" argument is a script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true}

// wrappers are programs that run the rest of their arguments as a command.
var wrappers = map[string]bool{
	"exec": true, "env": true, "nohup": true, "time": true, "stdbuf": true, "nice": true,
	"tini": true, "dumb-init": true, "sudo": true, "setsid": true, "ionice": true,
	"numactl": true, "taskset": true, "chrt": true, "--": true,
}
