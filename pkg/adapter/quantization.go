package adapter

import (
	"regexp"
	"strings"
)

// quantizationWords are quantisation schemes a model repository names as a
// word of its name ("Qwen2.5-7B-Instruct-AWQ", "Llama-3.1-8B-FP8").
var quantizationWords = map[string]string{
	"awq": "awq", "gptq": "gptq", "fp8": "fp8", "fp4": "fp4", "nvfp4": "nvfp4", "mxfp4": "mxfp4",
	"int4": "int4", "int8": "int8", "w4a16": "w4a16", "w8a8": "w8a8", "w8a16": "w8a16",
	"bnb": "bitsandbytes", "exl2": "exl2", "hqq": "hqq", "aqlm": "aqlm", "gguf": "gguf",
}

// ggufQuant is a llama.cpp quantisation type in a file or tag name
// ("q4_k_m", "Q8_0", "iq3_xs").
var ggufQuant = regexp.MustCompile(`(?i)^(i?q[1-8](_[0-9a-z]+)*|f16|bf16)$`)

// QuantizationFromName returns the quantisation a model's name states as a
// word of its last segment (its tag, for "name:tag"), lower-cased, and ""
// when it states none. It reads words only: "Qwen3-8B" states nothing.
func QuantizationFromName(name string) string {
	last := name
	if i := strings.LastIndexByte(last, '/'); i >= 0 {
		last = last[i+1:]
	}
	words := strings.FieldsFunc(last, func(r rune) bool { return r == '-' || r == '.' || r == ':' })
	found := ""
	for _, w := range words {
		lw := strings.ToLower(w)
		if q, ok := quantizationWords[lw]; ok {
			found = q
		}
		if ggufQuant.MatchString(w) && strings.Contains(w, "_") {
			found = lw
		}
	}
	return found
}
