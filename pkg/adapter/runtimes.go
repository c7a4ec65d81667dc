package adapter

// The canonical names of serving runtimes, serving platforms and
// evaluation/training frameworks, as documents carry them (Runtime.Name,
// Framework.Name). The pod-template scraper (package podtemplate) names
// what it recognises with these constants; an adapter that reports a
// runtime its kind implies (KubeAI's spec.engine "VLLM", a Dynamo
// backendFramework "trtllm") should map it to one of them, so that every
// document names the same engine the same way and a reader can count
// workloads by runtime across adapters. A runtime that is not listed here
// may still be reported: use its own project's lower-case name.
const (
	// Serving engines.
	RuntimeVLLM                    = "vllm"
	RuntimeSGLang                  = "sglang"
	RuntimeTensorRTLLM             = "tensorrt-llm"
	RuntimeTriton                  = "triton"
	RuntimeTGI                     = "tgi"
	RuntimeTEI                     = "tei"
	RuntimeOllama                  = "ollama"
	RuntimeLlamaCpp                = "llama.cpp"
	RuntimeLMDeploy                = "lmdeploy"
	RuntimeLiteLLM                 = "litellm"
	RuntimeTensorFlowServing       = "tensorflow-serving"
	RuntimeTorchServe              = "torchserve"
	RuntimeOVMS                    = "ovms"
	RuntimeMLServer                = "mlserver"
	RuntimeLocalAI                 = "localai"
	RuntimeXinference              = "xinference"
	RuntimeDeepSparse              = "deepsparse"
	RuntimeSaxML                   = "saxml"
	RuntimeJetStream               = "jetstream"
	RuntimeRayServe                = "ray-serve"
	RuntimeLLMKatan                = "llm-katan"
	RuntimeCaikit                  = "caikit"
	RuntimeKServeHuggingFaceServer = "kserve-huggingfaceserver"
	RuntimeLLMD                    = "llm-d"
	RuntimeLLMDInferenceSim        = "llm-d-inference-sim"

	// Serving platforms (Runtime.Platform): they run an engine, reported as
	// a runtime claim of its own when known.
	PlatformDynamo = "dynamo"
	PlatformNIM    = "nim"
	PlatformKServe = "kserve"
	PlatformRay    = "ray"

	// Evaluation and training frameworks (Framework.Name).
	FrameworkLMEvaluationHarness = "lm-evaluation-harness"
	FrameworkTorchrun            = "torchrun"
	FrameworkAccelerate          = "accelerate"
	FrameworkDeepSpeed           = "deepspeed"
	FrameworkTRL                 = "trl"
	FrameworkLlamaFactory        = "llama-factory"
	FrameworkTorchtune           = "torchtune"
	// Machine-learning frameworks a training or evaluation job runs.
	FrameworkPyTorch      = "pytorch"
	FrameworkTensorFlow   = "tensorflow"
	FrameworkJAX          = "jax"
	FrameworkXGBoost      = "xgboost"
	FrameworkPaddlePaddle = "paddlepaddle"
	FrameworkMXNet        = "mxnet"
	FrameworkMindSpore    = "mindspore"
	FrameworkHorovod      = "horovod"
	FrameworkMPI          = "mpi"
	// Evaluation frameworks besides lm-evaluation-harness.
	FrameworkRagas   = "ragas"
	FrameworkTruLens = "trulens"
)

// RuntimeNames returns the canonical serving engine names, sorted.
func RuntimeNames() []string {
	return []string{
		RuntimeCaikit, RuntimeDeepSparse, RuntimeJetStream, RuntimeKServeHuggingFaceServer, RuntimeLiteLLM,
		RuntimeLlamaCpp, RuntimeLLMD, RuntimeLLMDInferenceSim, RuntimeLLMKatan, RuntimeLMDeploy, RuntimeLocalAI,
		RuntimeMLServer, RuntimeOllama, RuntimeOVMS, RuntimeRayServe, RuntimeSaxML, RuntimeSGLang,
		RuntimeTEI, RuntimeTensorFlowServing, RuntimeTensorRTLLM, RuntimeTGI, RuntimeTorchServe,
		RuntimeTriton, RuntimeVLLM, RuntimeXinference,
	}
}

// PlatformNames returns the canonical serving platform names, sorted.
func PlatformNames() []string {
	return []string{PlatformDynamo, PlatformKServe, PlatformNIM, PlatformRay}
}

// FrameworkNames returns the canonical evaluation and training framework
// names, sorted.
func FrameworkNames() []string {
	return []string{
		FrameworkAccelerate, FrameworkDeepSpeed, FrameworkHorovod, FrameworkJAX, FrameworkLlamaFactory,
		FrameworkLMEvaluationHarness, FrameworkMindSpore, FrameworkMPI, FrameworkMXNet, FrameworkPaddlePaddle,
		FrameworkPyTorch, FrameworkRagas, FrameworkTensorFlow, FrameworkTorchrun, FrameworkTorchtune, FrameworkTRL,
		FrameworkTruLens, FrameworkXGBoost,
	}
}
