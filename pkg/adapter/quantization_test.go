package adapter

import "testing"

func TestQuantizationFromName(t *testing.T) {
	for name, want := range map[string]string{
		"Qwen/Qwen2.5-7B-Instruct-AWQ":                   "awq",
		"neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8":     "fp8",
		"TheBloke/Llama-2-7B-GPTQ":                       "gptq",
		"llama-3.1-8b-instruct-q4_k_m":                   "q4_k_m",
		"unsloth/gemma-3-4b-it-GGUF":                     "gguf",
		"RedHatAI/Llama-3.3-70B-Instruct-quantized.w8a8": "w8a8",
		"Qwen/Qwen3-8B":                                  "",
		"meta-llama/Llama-3.1-8B-Instruct":               "",
		"gptq-and-more/plain-model":                      "", // only the last segment counts
		"l3.1-8B-F16":                                    "",
	} {
		if got := QuantizationFromName(name); got != want {
			t.Errorf("QuantizationFromName(%q) = %q, want %q", name, got, want)
		}
	}
}
