package podtemplate

import (
	"path"
	"strings"
)

// This file reads a container's command line: which runtime or framework
// it starts, and which models its flags, positional arguments and scripts
// name.

// modelFlags are the flags whose value names a model, written with "-"
// (an "_" in a flag is read as "-": "--model_path" is "--model-path").
var modelFlags = map[string]bool{
	"--model": true, "--model-path": true, "--model-id": true, "--model-name": true,
	"--model-name-or-path": true, "--hf-model": true, "--hf-model-id": true,
	"--base-model": true, "--pretrained-model-name-or-path": true, "--model-dir": true,
}

// quantizationFlags name the quantisation a server applies to its model
// (vLLM and SGLang --quantization, TGI --quantize).
var quantizationFlags = map[string]bool{"--quantization": true, "--quantize": true}

// servedNameFlags name the model as the server exposes it.
var servedNameFlags = map[string]bool{"--served-model-name": true}

// weakModelFlags name a model's tokenizer: a weaker claim on the model.
var weakModelFlags = map[string]bool{"--tokenizer": true, "--tokenizer-path": true}

// storageFlags name a directory holding models (a model repository), which
// is model storage, not a model.
var storageFlags = map[string]bool{
	"--model-repository": true, "--model-repo": true, "--model-store": true,
	"--triton-model-repo-dir": true, "--model-repository-path": true, "--models-dir": true,
}

// normFlag lower-cases a long flag and reads "_" as "-".
func normFlag(f string) string {
	if !strings.HasPrefix(f, "--") {
		return f
	}
	return "--" + strings.ReplaceAll(strings.ToLower(f[2:]), "_", "-")
}

// ModelFlags are the command-line flags whose value names a model (as
// normalised: "--model_path" is "--model-path"). Read-only.
var ModelFlags = []string{
	"--model", "--model-id", "--model-path", "--model-name", "--model-name-or-path",
	"--hf-model", "--hf-model-id", "--base-model", "--pretrained-model-name-or-path",
	"--model-dir", "--served-model-name",
}

// IsModelFlag reports whether flag (e.g. "--model", "--model_path") names a
// model or the name it is served under.
func IsModelFlag(flag string) bool {
	f := normFlag(flag)
	return modelFlags[f] || servedNameFlags[f]
}

// program is what a command runs once wrappers are removed.
type program struct {
	name   string // base name of the program or script ("vllm", "server.py")
	module string // the module of "python -m"
	word   word   // the word naming it
	rest   []word // the words after it
	// python is Python code given inline ("-c") or on standard input.
	python []word
}

// identify finds the program a command runs.
func identify(c command) (program, bool) {
	ws := c.words
	i := 0
	for i < len(ws) {
		base := path.Base(ws[i].text)
		switch {
		case wrappers[base]:
			i++
			for i < len(ws) && (strings.HasPrefix(ws[i].text, "-") && ws[i].text != "--" ||
				base == "env" && strings.Contains(ws[i].text, "=")) {
				i++
			}
			continue
		case (base == "uv" || base == "poetry" || base == "pipenv" || base == "conda" || base == "micromamba") &&
			i+1 < len(ws) && ws[i+1].text == "run":
			i += 2
			for i < len(ws) && strings.HasPrefix(ws[i].text, "-") {
				if ws[i].text == "-n" || ws[i].text == "--name" || ws[i].text == "-p" {
					i++
				}
				i++
			}
			continue
		}
		break
	}
	if i >= len(ws) {
		return program{}, false
	}
	p := program{name: path.Base(ws[i].text), word: ws[i], rest: ws[i+1:]}
	if !isPython(p.name) {
		return p, true
	}
	rest := p.rest
	for j := 0; j < len(rest); j++ {
		t := rest[j].text
		switch {
		case t == "-m" && j+1 < len(rest):
			p.module, p.word, p.rest = rest[j+1].text, rest[j+1], rest[j+2:]
			return p, true
		case strings.HasPrefix(t, "-m") && len(t) > 2 && !strings.HasPrefix(t, "--"):
			p.module, p.word, p.rest = t[2:], rest[j], rest[j+1:]
			return p, true
		case t == "-c" && j+1 < len(rest):
			p.python = append(p.python, rest[j+1])
			p.rest = rest[j+2:]
			return p, true
		case t == "-":
			p.python = append(p.python, c.heredocs...)
			p.rest = rest[j+1:]
			return p, true
		case t == "-X" || t == "-W":
			j++
		case strings.HasPrefix(t, "-"):
		default:
			p.name, p.word, p.rest = path.Base(t), rest[j], rest[j+1:]
			return p, true
		}
	}
	p.python = append(p.python, c.heredocs...)
	p.rest = nil
	return p, true
}

// matchProgram returns the rule a program matches.
func matchProgram(p program) (programRule, bool) {
	for _, r := range programRules {
		if p.module != "" {
			for _, m := range r.modules {
				if p.module == m || strings.HasSuffix(m, ".") && strings.HasPrefix(p.module, m) {
					return r, true
				}
			}
			continue
		}
		for _, name := range r.programs {
			if p.name != name {
				continue
			}
			if len(r.sub) == 0 {
				return r, true
			}
			if len(p.rest) > 0 && contains(r.sub, p.rest[0].text) {
				return r, true
			}
		}
	}
	return programRule{}, false
}

// what is the module or program a rule matched, for a locator.
func (p program) what() string {
	if p.module != "" {
		return p.module
	}
	return p.name
}

// positionalModel returns the word that names a model positionally for
// programs that take one: "vllm serve <model>", "lmdeploy serve api_server
// <model>", "ollama run|pull <model>", "huggingface-cli download <repo>",
// "hf download <repo>", "trtllm-serve [serve] <model>", "sglang serve
// <model>".
func positionalModel(p program) (word, string, bool) {
	at := func(i int) (word, bool) {
		if i < len(p.rest) && !strings.HasPrefix(p.rest[i].text, "-") {
			return p.rest[i], true
		}
		return word{}, false
	}
	sub := func(i int) string {
		if i < len(p.rest) {
			return p.rest[i].text
		}
		return ""
	}
	var w word
	var ok bool
	var label string
	switch {
	case p.module != "":
		return word{}, "", false
	case (p.name == "vllm" || p.name == "sglang") && sub(0) == "serve":
		w, ok = at(1)
		label = p.name + " serve"
	case p.name == "lmdeploy" && sub(0) == "serve":
		w, ok = at(2)
		label = "lmdeploy serve"
	case p.name == "ollama" && (sub(0) == "run" || sub(0) == "pull"):
		w, ok = at(1)
		label = "ollama " + sub(0)
	case (p.name == "huggingface-cli" || p.name == "hf") && sub(0) == "download":
		w, ok = at(1)
		label = p.name + " download"
	case p.name == "local-ai" || p.name == "localai":
		w, ok = at(0)
		if ok && w.text == "run" {
			w, ok = at(1)
		}
		label = "local-ai"
	case p.name == "trtllm-serve":
		if sub(0) == "serve" {
			w, ok = at(1)
		} else {
			w, ok = at(0)
		}
		label = "trtllm-serve"
	}
	return w, label, ok
}

// flagValue returns the value of the flag at ws[i] ("--f v" or "--f=v") and
// its normalised name.
func flagValue(ws []word, i int) (flag string, val word, ok bool) {
	t := ws[i].text
	if !strings.HasPrefix(t, "-") {
		return "", word{}, false
	}
	name, v, hasEq := strings.Cut(t, "=")
	flag = normFlag(name)
	if hasEq {
		w := ws[i]
		w.text = v
		return flag, w, true
	}
	if i+1 >= len(ws) || strings.HasPrefix(ws[i+1].text, "-") {
		return flag, word{}, false
	}
	return flag, ws[i+1], true
}

// lmEvalModelArgs are the keys of lm-evaluation-harness's --model_args that
// name the evaluated model.
var lmEvalModelArgs = []string{"pretrained", "model", "model_name", "path", "base_model", "peft"}

// maxTextModelKeys are MaxText/JetStream "key=value" arguments naming the
// model.
var maxTextModelKeys = []string{"model_name", "model"}
