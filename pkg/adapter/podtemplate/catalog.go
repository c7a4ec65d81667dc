package podtemplate

import (
	"path"
	"regexp"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
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
	{runtime: adapter.PlatformDynamo, platform: true, engine: adapter.RuntimeVLLM, repo: "nvcr.io/nvidia/ai-dynamo/vllm-runtime", official: true},
	{runtime: adapter.PlatformDynamo, platform: true, engine: adapter.RuntimeSGLang, repo: "nvcr.io/nvidia/ai-dynamo/sglang-runtime", official: true},
	{runtime: adapter.PlatformDynamo, platform: true, engine: adapter.RuntimeTensorRTLLM, repo: "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime", official: true},
	{runtime: adapter.PlatformDynamo, platform: true, repo: "nvcr.io/nvidia/ai-dynamo/", prefix: true, official: true},
	{runtime: adapter.PlatformNIM, platform: true, repo: "nvcr.io/nim/", prefix: true, official: true},
	{runtime: adapter.RuntimeVLLM, repo: "docker.io/vllm/", prefix: true, official: true},
	{runtime: adapter.RuntimeVLLM, repo: "docker.io/rocm/vllm", official: true},
	{runtime: adapter.RuntimeVLLM, repo: "docker.io/rocm/vllm-dev", official: true},
	{runtime: adapter.RuntimeSGLang, repo: "docker.io/lmsysorg/sglang", official: true},
	{runtime: adapter.RuntimeTriton, repo: "nvcr.io/nvidia/tritonserver", official: true},
	{runtime: adapter.RuntimeTensorRTLLM, repo: "nvcr.io/nvidia/tensorrt-llm/", prefix: true, official: true},
	{runtime: adapter.RuntimeTGI, repo: "docker.io/huggingface/text-generation-inference", official: true},
	{runtime: adapter.RuntimeTGI, repo: "ghcr.io/huggingface/text-generation-inference", official: true},
	{runtime: adapter.RuntimeTEI, repo: "ghcr.io/huggingface/text-embeddings-inference", official: true},
	{runtime: adapter.RuntimeOllama, repo: "docker.io/ollama/ollama", official: true},
	// A Ray image runs Ray, not necessarily Ray Serve: Serve is named by a
	// serve config or "serve run". The tag ("2.9.0-py310-gpu") is the
	// image's, not a version a KubeRay rayVersion would agree with.
	{runtime: adapter.PlatformRay, platform: true, repo: "docker.io/rayproject/ray"},
	{runtime: adapter.PlatformRay, platform: true, repo: "docker.io/rayproject/ray-ml"},
	{runtime: adapter.RuntimeRayServe, repo: "docker.io/anyscale/ray-llm", official: true},
	{runtime: adapter.RuntimeLLMDInferenceSim, repo: "ghcr.io/llm-d/llm-d-inference-sim", official: true},
	{runtime: adapter.RuntimeLLMD, repo: "ghcr.io/llm-d/", prefix: true, official: true},
	{runtime: adapter.RuntimeLMDeploy, repo: "docker.io/openmmlab/lmdeploy", official: true},
	{runtime: adapter.RuntimeLiteLLM, repo: "ghcr.io/berriai/litellm", official: true},
	{runtime: adapter.RuntimeLlamaCpp, repo: "ghcr.io/ggml-org/llama.cpp", official: true},
	{runtime: adapter.RuntimeLlamaCpp, repo: "ghcr.io/ggerganov/llama.cpp", official: true},
	{runtime: adapter.RuntimeTensorFlowServing, repo: "docker.io/tensorflow/serving", official: true},
	{runtime: adapter.RuntimeTorchServe, repo: "docker.io/pytorch/torchserve", official: true},
	{runtime: adapter.RuntimeOVMS, repo: "docker.io/openvino/model_server", official: true},
	{runtime: adapter.RuntimeMLServer, repo: "docker.io/seldonio/mlserver", official: true},
	{runtime: adapter.RuntimeLocalAI, repo: "quay.io/go-skynet/local-ai", official: true},
	{runtime: adapter.RuntimeLocalAI, repo: "docker.io/localai/localai", official: true},
	{runtime: adapter.RuntimeXinference, repo: "docker.io/xprobe/xinference", official: true},
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
	{adapter.RuntimeVLLM, []string{"vllm"}},
	{adapter.RuntimeSGLang, []string{"sglang"}},
	{adapter.RuntimeTGI, []string{"text-generation-inference", "huggingface-text-generation-inference", "tgi", "tgis", "optimum-tpu"}},
	{adapter.RuntimeTEI, []string{"text-embeddings-inference", "huggingface-text-embeddings-inference", "tei"}},
	{adapter.RuntimeTriton, []string{"tritonserver", "triton-server", "triton-inference-server"}},
	{adapter.RuntimeTensorRTLLM, []string{"tensorrt-llm", "tensorrt_llm", "trtllm"}},
	{adapter.RuntimeOllama, []string{"ollama"}},
	{adapter.RuntimeTorchServe, []string{"torchserve"}},
	{adapter.RuntimeTensorFlowServing, []string{"tf-serving", "tensorflow-serving", "tfserving"}},
	{adapter.RuntimeLMDeploy, []string{"lmdeploy"}},
	{adapter.RuntimeLlamaCpp, []string{"llama.cpp", "llamacpp", "llama-cpp", "llama-server"}},
	{adapter.RuntimeLocalAI, []string{"local-ai", "localai"}},
	{adapter.RuntimeDeepSparse, []string{"deepsparse"}},
	{adapter.RuntimeSaxML, []string{"sax-model-server", "saxml"}},
	{adapter.RuntimeJetStream, []string{"jetstream", "jetstream-http", "maxengine-server", "jetstream-pytorch"}},
	{adapter.RuntimeMLServer, []string{"mlserver"}},
	{adapter.RuntimeOVMS, []string{"ovms", "openvino-model-server"}},
	{adapter.RuntimeRayServe, []string{"ray-llm", "ray-serve"}},
	{adapter.RuntimeLLMKatan, []string{"llm-katan"}},
	{adapter.RuntimeCaikit, []string{"caikit-tgis-serving", "caikit-nlp", "caikit"}},
	{adapter.RuntimeXinference, []string{"xinference"}},
	{adapter.RuntimeKServeHuggingFaceServer, []string{"huggingfaceserver"}},
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
	{runtime: adapter.PlatformDynamo, platform: true, engine: adapter.RuntimeVLLM, modules: []string{"dynamo.vllm"}},
	{runtime: adapter.PlatformDynamo, platform: true, engine: adapter.RuntimeSGLang, modules: []string{"dynamo.sglang"}},
	{runtime: adapter.PlatformDynamo, platform: true, engine: adapter.RuntimeTensorRTLLM, modules: []string{"dynamo.trtllm"}},
	{runtime: adapter.PlatformDynamo, platform: true, modules: []string{"dynamo.frontend", "dynamo.planner", "dynamo.mocker", "dynamo.router", "dynamo."}},
	{runtime: adapter.RuntimeVLLM, programs: []string{"vllm"}, sub: []string{"serve"}},
	{runtime: adapter.RuntimeVLLM, modules: []string{"vllm.entrypoints."}},
	{runtime: adapter.RuntimeSGLang, modules: []string{"sglang.launch_server", "sglang.launch_server_llavavid", "sglang_router.launch_server", "sglang_router.launch_router", "sglang.srt."}},
	{runtime: adapter.RuntimeSGLang, programs: []string{"sglang"}, sub: []string{"serve"}},
	{runtime: adapter.RuntimeTGI, programs: []string{"text-generation-launcher", "text-generation-server"}},
	{runtime: adapter.RuntimeTEI, programs: []string{"text-embeddings-router"}},
	{runtime: adapter.RuntimeTriton, programs: []string{"tritonserver"}},
	{runtime: adapter.RuntimeTensorRTLLM, programs: []string{"trtllm-serve"}},
	{runtime: adapter.RuntimeTorchServe, programs: []string{"torchserve"}},
	{runtime: adapter.RuntimeOllama, programs: []string{"ollama"}, sub: []string{"serve", "run", "pull"}},
	{runtime: adapter.RuntimeLlamaCpp, programs: []string{"llama-server", "llama-cli", "llama.cpp"}},
	{runtime: adapter.RuntimeLlamaCpp, modules: []string{"llama_cpp.server"}},
	{runtime: adapter.RuntimeLMDeploy, programs: []string{"lmdeploy"}, sub: []string{"serve"}},
	{runtime: adapter.RuntimeLMDeploy, modules: []string{"lmdeploy.serve."}},
	{runtime: adapter.RuntimeJetStream, programs: []string{"jetstream", "maxengine_server", "maxengine-server"}},
	{runtime: adapter.RuntimeJetStream, modules: []string{"jetstream.", "jetstream_pt.", "maxengine_server"}},
	{runtime: adapter.RuntimeRayServe, programs: []string{"serve"}, sub: []string{"run", "deploy", "start"}},
	{runtime: adapter.RuntimeRayServe, modules: []string{"ray.serve."}},
	{runtime: adapter.RuntimeMLServer, programs: []string{"mlserver"}, sub: []string{"start"}},
	{runtime: adapter.RuntimeDeepSparse, programs: []string{"deepsparse.server", "deepsparse.openai_server"}},
	{runtime: adapter.RuntimeDeepSparse, modules: []string{"deepsparse.server"}},
	{runtime: adapter.RuntimeTensorFlowServing, programs: []string{"tensorflow_model_server"}},
	{runtime: adapter.RuntimeOVMS, programs: []string{"ovms"}},
	{runtime: adapter.RuntimeLocalAI, programs: []string{"local-ai"}},
	{runtime: adapter.RuntimeXinference, programs: []string{"xinference-local", "xinference"}},
	{framework: adapter.FrameworkLMEvaluationHarness, purpose: adapter.PurposeEvaluation, programs: []string{"lm_eval", "lm-eval"}, modules: []string{"lm_eval"}},
	{framework: adapter.FrameworkTorchrun, purpose: adapter.PurposeTraining, programs: []string{"torchrun"}, modules: []string{"torch.distributed.run", "torch.distributed.launch"}},
	{framework: adapter.FrameworkAccelerate, purpose: adapter.PurposeTraining, programs: []string{"accelerate"}, sub: []string{"launch"}},
	{framework: adapter.FrameworkDeepSpeed, purpose: adapter.PurposeTraining, programs: []string{"deepspeed"}},
	{framework: adapter.FrameworkTRL, purpose: adapter.PurposeTraining, programs: []string{"trl"}},
	{framework: adapter.FrameworkLlamaFactory, purpose: adapter.PurposeTraining, programs: []string{"llamafactory-cli"}, sub: []string{"train"}},
	{framework: adapter.FrameworkTorchtune, purpose: adapter.PurposeTraining, programs: []string{"tune"}, sub: []string{"run"}},
	{framework: adapter.FrameworkHorovod, purpose: adapter.PurposeTraining, programs: []string{"horovodrun"}, modules: []string{"horovod.runner.launch", "horovod.run"}},
	{framework: adapter.FrameworkPaddlePaddle, purpose: adapter.PurposeTraining, modules: []string{"paddle.distributed.launch", "paddle.distributed.fleet.launch", "paddle."}},
	{framework: adapter.FrameworkMindSpore, purpose: adapter.PurposeTraining, programs: []string{"msrun"}, modules: []string{"mindspore."}},
	{framework: adapter.FrameworkMXNet, purpose: adapter.PurposeTraining, modules: []string{"mxnet.", "mxnet"}},
	{framework: adapter.FrameworkXGBoost, purpose: adapter.PurposeTraining, modules: []string{"xgboost.", "xgboost"}},
	{framework: adapter.FrameworkTensorFlow, purpose: adapter.PurposeTraining, modules: []string{"tensorflow.", "tensorflow"}},
	{framework: adapter.FrameworkJAX, purpose: adapter.PurposeTraining, modules: []string{"jax.", "jax"}},
	{framework: adapter.FrameworkRagas, purpose: adapter.PurposeEvaluation, programs: []string{"ragas"}, modules: []string{"ragas"}},
	{framework: adapter.FrameworkTruLens, purpose: adapter.PurposeEvaluation, modules: []string{"trulens.", "trulens_eval"}},
	{framework: adapter.FrameworkMPI, purpose: adapter.PurposeTraining, programs: []string{"mpirun", "mpiexec"}},
}

// frameworkRule names the machine-learning or evaluation framework an image
// holds. Like a nameRule it matches the last segment of the repository in
// any registry ("tensorflow/tensorflow", "nvcr.io/nvidia/pytorch",
// "ghcr.io/acme/jax-tpu"); it is read only when the image names no serving
// runtime, so "tensorflow/serving" stays a runtime.
type frameworkRule struct {
	framework, purpose string
	names              []string
}

var frameworkRules = []frameworkRule{
	{adapter.FrameworkPyTorch, adapter.PurposeTraining, []string{"pytorch", "torch"}},
	{adapter.FrameworkTensorFlow, adapter.PurposeTraining, []string{"tensorflow"}},
	{adapter.FrameworkJAX, adapter.PurposeTraining, []string{"jax"}},
	{adapter.FrameworkXGBoost, adapter.PurposeTraining, []string{"xgboost"}},
	{adapter.FrameworkPaddlePaddle, adapter.PurposeTraining, []string{"paddle", "paddlepaddle"}},
	{adapter.FrameworkMXNet, adapter.PurposeTraining, []string{"mxnet"}},
	{adapter.FrameworkMindSpore, adapter.PurposeTraining, []string{"mindspore"}},
	{adapter.FrameworkHorovod, adapter.PurposeTraining, []string{"horovod"}},
	{adapter.FrameworkDeepSpeed, adapter.PurposeTraining, []string{"deepspeed"}},
	{adapter.FrameworkLlamaFactory, adapter.PurposeTraining, []string{"llama-factory", "llamafactory"}},
	{adapter.FrameworkTorchtune, adapter.PurposeTraining, []string{"torchtune"}},
	{adapter.FrameworkLMEvaluationHarness, adapter.PurposeEvaluation, []string{"lm-eval", "lm-evaluation-harness", "lm_eval", "lmeval"}},
	{adapter.FrameworkRagas, adapter.PurposeEvaluation, []string{"ragas"}},
	{adapter.FrameworkTruLens, adapter.PurposeEvaluation, []string{"trulens", "trulens-eval"}},
}

// frameworkEnv names a framework from the env vars its launcher sets or
// reads: a name exactly, or a prefix when it ends in "_".
var frameworkEnv = []struct{ name, framework string }{
	{"TF_CONFIG", adapter.FrameworkTensorFlow},
	{"TF_XLA_FLAGS", adapter.FrameworkTensorFlow},
	{"TF_FORCE_GPU_ALLOW_GROWTH", adapter.FrameworkTensorFlow},
	{"TF_CPP_MIN_LOG_LEVEL", adapter.FrameworkTensorFlow},
	{"DMLC_TRACKER_", adapter.FrameworkXGBoost},
	{"DMLC_", adapter.FrameworkMXNet},
	{"PADDLE_", adapter.FrameworkPaddlePaddle},
	{"HOROVOD_", adapter.FrameworkHorovod},
	{"JAX_", adapter.FrameworkJAX},
	{"MS_ROLE", adapter.FrameworkMindSpore},
	{"MS_SCHED_HOST", adapter.FrameworkMindSpore},
	{"MS_WORKER_NUM", adapter.FrameworkMindSpore},
}

// pythonFrameworks name the framework inline Python code uses, by the
// import or the API it calls ("tf.distribute").
var pythonFrameworks = []struct {
	framework string
	re        *regexp.Regexp
}{
	{adapter.FrameworkTensorFlow, regexp.MustCompile(`\bimport tensorflow\b|\bfrom tensorflow\b|\btf\.distribute\.`)},
	{adapter.FrameworkJAX, regexp.MustCompile(`\bimport jax\b|\bfrom jax\b|\bjax\.distributed\.`)},
	{adapter.FrameworkXGBoost, regexp.MustCompile(`\bimport xgboost\b|\bfrom xgboost\b`)},
	{adapter.FrameworkPaddlePaddle, regexp.MustCompile(`\bimport paddle\b|\bfrom paddle\b`)},
	{adapter.FrameworkMXNet, regexp.MustCompile(`\bimport mxnet\b|\bfrom mxnet\b`)},
	{adapter.FrameworkMindSpore, regexp.MustCompile(`\bimport mindspore\b|\bfrom mindspore\b`)},
	{adapter.FrameworkHorovod, regexp.MustCompile(`\bimport horovod\b|\bfrom horovod\b`)},
	{adapter.FrameworkPyTorch, regexp.MustCompile(`\bimport torch\b|\bfrom torch\b`)},
}

// envPrefixRules name a runtime from the env vars only it reads
// ("VLLM_ATTENTION_BACKEND"). Names that point at a remote server (an URL,
// an endpoint) are a client's and do not count.
var envPrefixRules = []struct{ prefix, runtime string }{
	{"VLLM_", adapter.RuntimeVLLM},
	{"SGLANG_", adapter.RuntimeSGLang},
	{"LLAMA_ARG_", adapter.RuntimeLlamaCpp},
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

// frameworkFromName maps a free-text name (a label value) to a framework:
// exactly one of the names of frameworkRules or a framework's own name.
func frameworkFromName(v string) (name, purpose string, ok bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return "", "", false
	}
	for _, r := range frameworkRules {
		if v == r.framework || contains(r.names, v) {
			return r.framework, r.purpose, true
		}
	}
	return "", "", false
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
