package podtemplate

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// CommandInput is what ReadCommand reads: one container's command line.
type CommandInput struct {
	Command, Args []string
	// Env holds the container's literal env values (no secret values), for
	// "$(VAR)" references and shell variables.
	Env map[string]string
	// ContainerPath is the container's locator.
	ContainerPath string
	// ImageRuntime is the runtime the image runs, when known ("vllm"): an
	// image entrypoint takes the args ("serve <model>").
	ImageRuntime string
}

// ReadCommand reads a container's command line: the runtimes and
// frameworks it starts (inferred, located at the element naming the
// program), the models its flags (declared), positional arguments and
// scripts (inferred) name, and model repositories (storage). "sh -c"
// scripts are parsed as shell (see parseScript) and each of their commands
// is read the same way. Values are redacted; each redaction is recorded.
func ReadCommand(in CommandInput) adapter.Findings {
	f, _ := readCommand(in)
	return f
}

// commandInfo is what ReadCommand learns about a command line besides its
// findings.
type commandInfo struct {
	// download is set when the command only fetches a model ("hf download",
	// "huggingface-cli download", NIM's "download-to-cache"): the container
	// fills a cache and serves nothing, whatever its image.
	download bool
}

func readCommand(in CommandInput) (adapter.Findings, commandInfo) {
	var f adapter.Findings
	r := commandReader{in: in, f: &f}
	for _, c := range r.commands() {
		r.read(c)
	}
	r.finish()
	return f, commandInfo{download: r.download && len(r.seen) == 0}
}

// ModelFromArgs finds the model claims in a container's command and args
// (see ReadCommand); containerPath is the container's locator and env its
// literal env values.
func ModelFromArgs(command, args []string, env map[string]string, containerPath string) ([]adapter.Model, []adapter.Redaction) {
	f := ReadCommand(CommandInput{Command: command, Args: args, Env: env, ContainerPath: containerPath})
	return f.Models, f.Redactions
}

type commandReader struct {
	in CommandInput
	f  *adapter.Findings
	// served holds the served model names seen, with their evidence.
	served []adapter.Model
	// runtimes seen in this container, for rules that depend on them.
	seen map[string]bool
	// quantization and task of the served model, from the server's flags.
	quantization, task string
	// download is set when a command fetches a model (see commandInfo).
	download bool
	// frameworks seen in this container, recorded once each.
	frameworks map[string]bool
	// outputs are the values of output flags (--output_dir): what the job
	// writes, never a model it loads.
	outputs []string
}

// paramWord is a flag value that names a method or a task: a short word of
// letters, digits, '_' and '-' (never a path, a URL or a sentence).
var paramWord = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

var kubeVarRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// expandKube resolves Kubernetes "$(VAR)" references from env, as the
// kubelet does before the container starts; unknown references stay.
func expandKube(s string, env map[string]string) string {
	if !strings.Contains(s, "$(") {
		return s
	}
	return kubeVarRef.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := env[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

// commands lists the commands the container runs: its command line, or the
// commands of its "sh -c" script.
func (r *commandReader) commands() []command {
	var ws []word
	add := func(list []string, field string, src adapter.Source) {
		for i, el := range list {
			t := expandKube(el, r.in.Env)
			ws = append(ws, word{text: t, source: src, locator: fmt.Sprintf("%s.%s[%d]", r.in.ContainerPath, field, i), unresolved: strings.Contains(t, "$(")})
		}
	}
	add(r.in.Command, "command", adapter.SourceContainerCommand)
	add(r.in.Args, "args", adapter.SourceContainerArg)
	if len(ws) == 0 {
		return nil
	}
	if len(r.in.Command) == 0 {
		// The image's entrypoint takes the args.
		switch r.in.ImageRuntime {
		case "vllm":
			if ws[0].text == "serve" {
				ws = append([]word{{text: "vllm", source: adapter.SourceImagePattern, locator: r.in.ContainerPath + ".image"}}, ws...)
			}
		case "localai":
			ws = append([]word{{text: "local-ai", source: adapter.SourceImagePattern, locator: r.in.ContainerPath + ".image"}}, ws...)
		}
	}
	// A shell with -c: the script is the first word after the options.
	if i := shellIndex(ws); i >= 0 {
		for j := i + 1; j < len(ws); j++ {
			t := ws[j].text
			if strings.HasPrefix(t, "-") && t != "-" && t != "--" {
				if strings.ContainsRune(t[1:], 'c') && !strings.HasPrefix(t, "--") {
					k := j + 1
					if k < len(ws) && ws[k].text == "--" {
						// "bash -lc -- 'script'": "--" ends the options.
						k++
					}
					if k < len(ws) {
						script := ws[k]
						if cmds, ok := parseScript(script.text, script.source, script.locator, r.in.Env, ws[k+1:]); ok {
							return cmds
						}
						return []command{{words: splitWords(ws[k:])}}
					}
				}
				continue
			}
			break
		}
	}
	return []command{{words: splitWords(ws)}}
}

// shellIndex returns the index of a shell program at the start of the
// command line (after wrappers), or -1.
func shellIndex(ws []word) int {
	for i, w := range ws {
		base := lastSegment(w.text)
		if shells[base] {
			return i
		}
		if !wrappers[base] {
			return -1
		}
	}
	return -1
}

func lastSegment(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// splitWords splits elements holding white space into words (not the code
// after "-c", one argument), each keeping
// its element's locator.
func splitWords(ws []word) []word {
	var out []word
	for i, w := range ws {
		// The code of "python -c" is one argument.
		if !strings.ContainsAny(w.text, " \t\n\r") || i > 0 && ws[i-1].text == "-c" {
			out = append(out, w)
			continue
		}
		for _, t := range strings.Fields(w.text) {
			t = strings.Trim(t, `"';`)
			if t != "" && t != "\\" {
				n := w
				n.text = t
				out = append(out, n)
			}
		}
	}
	return out
}

// read reads one command.
func (r *commandReader) read(c command) {
	p, ok := identify(c)
	if !ok {
		return
	}
	if rule, ok := matchProgram(p); ok {
		ev := adapter.Evidence{Source: p.word.source, Locator: p.word.locator + "(" + p.what() + ")"}
		switch {
		case rule.framework != "":
			r.framework(rule.framework, rule.purpose, ev)
		default:
			r.runtime(rule.runtime, rule.platform, ev)
			if rule.engine != "" {
				r.runtime(rule.engine, false, ev)
			}
		}
	}
	if downloadPrograms[p.name] {
		r.download = true
	}
	if w, label, ok := positionalModel(p); ok && !w.unresolved {
		addModelValue(r.f, w.text, adapter.Inferred, w.source, w.locator+"("+label+")", "")
		if strings.HasSuffix(label, " download") {
			r.download = true
		}
	}
	for _, code := range p.python {
		for _, m := range modelsInPython(code.text) {
			addModelValue(r.f, m, adapter.Inferred, code.source, code.locator+"(python)", "")
		}
		for _, pf := range pythonFrameworks {
			if pf.re.MatchString(code.text) {
				r.framework(pf.framework, adapter.PurposeTraining, adapter.Evidence{Source: code.source, Locator: code.locator + "(python)"})
			}
		}
		if strings.Contains(code.text, "snapshot_download(") || strings.Contains(code.text, "hf_hub_download(") {
			r.download = true
		}
	}
	r.flags(p, c.words)
	r.hubArgs(c.words)
}

// downloadPrograms only fetch models into a cache (NIM's download-to-cache
// and create-model-store).
var downloadPrograms = map[string]bool{"download-to-cache": true, "create-model-store": true}

// framework records a framework claim once per name.
func (r *commandReader) framework(name, purpose string, ev adapter.Evidence) {
	if r.frameworks == nil {
		r.frameworks = map[string]bool{}
	}
	if r.frameworks[name] {
		return
	}
	r.frameworks[name] = true
	r.f.Frameworks = append(r.f.Frameworks, adapter.Framework{Name: name, Purpose: purpose, Confidence: adapter.Inferred, Evidence: ev})
}

// hubArgs reads "hf://org/model" arguments that no model flag took: a job's
// argument naming a model on the Hugging Face hub ("--base hf://org/m", a
// positional "hf://org/m"), inferred. The value of a flag that names a
// dataset ("--dataset", "--data-path") is data, and that of an output flag
// ("--output-dir", "--push-to-hub") is what the job writes: neither is a
// model it loads.
func (r *commandReader) hubArgs(ws []word) {
	for i, w := range ws {
		flag, val := "", w.text
		if strings.HasPrefix(w.text, "-") {
			name, v, ok := strings.Cut(w.text, "=")
			if !ok {
				continue
			}
			flag, val = normFlag(name), v
		} else if i > 0 && strings.HasPrefix(ws[i-1].text, "-") && !strings.Contains(ws[i-1].text, "=") {
			flag = normFlag(ws[i-1].text)
		}
		lower := strings.ToLower(val)
		if !strings.HasPrefix(lower, "hf://") && !strings.HasPrefix(lower, "huggingface://") || w.unresolved {
			continue
		}
		if modelFlags[flag] || servedNameFlags[flag] || weakModelFlags[flag] || storageFlags[flag] {
			continue // read by flags
		}
		loc := w.locator + "(hf://)"
		if flag != "" {
			loc = w.locator + "(" + flag + ")"
		}
		switch {
		case strings.Contains(flag, "data"):
			ref, ok := parseModelValue(val)
			if ok && ref.name != "" {
				r.f.Data = append(r.f.Data, adapter.Data{Name: RedactInto(DatasetName(strings.TrimSpace(val)), loc, r.f), Kind: DataKindDataset, Confidence: adapter.Inferred,
					Evidence: adapter.Evidence{Source: w.source, Locator: loc}})
			}
		case isOutputFlag(flag):
		default:
			addModelValue(r.f, val, adapter.Inferred, w.source, loc, "")
		}
	}
}

// runtime records a runtime claim once per name and locator.
func (r *commandReader) runtime(name string, platform bool, ev adapter.Evidence) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[name] = true
	r.f.Runtimes = append(r.f.Runtimes, adapter.Runtime{Name: name, Platform: platform, Confidence: adapter.Inferred, Evidence: ev})
}

// flags reads the model, served-name, tokenizer and storage flags of a
// command, and the "key=value" forms of the programs that take them.
func (r *commandReader) flags(p program, ws []word) {
	lmEval := p.name == "lm_eval" || p.name == "lm-eval" || p.module == "lm_eval"
	llamaCpp := strings.HasPrefix(p.name, "llama-") || p.name == "llama.cpp" || p.module == "llama_cpp.server"
	maxText := r.in.ImageRuntime == "jetstream" || r.seen["jetstream"]
	for i := range ws {
		if flag, val, ok := flagValue(ws, i); ok && isOutputFlag(flag) && !val.unresolved {
			r.outputs = append(r.outputs, strings.TrimRight(val.text, "/"))
		}
	}
	serving := len(r.seen) > 0 || r.in.ImageRuntime != ""
	for i := range ws {
		t := ws[i].text
		if maxText && !strings.HasPrefix(t, "-") {
			if k, v, ok := strings.Cut(t, "="); ok && contains(maxTextModelKeys, k) {
				w := ws[i]
				addModelValue(r.f, v, adapter.Declared, w.source, w.locator+"("+k+")", "")
			}
			continue
		}
		flag, val, ok := flagValue(ws, i)
		if flag == "" {
			continue
		}
		if strings.HasPrefix(flag, "--triton") && !r.seen["triton"] {
			r.runtime("triton", false, adapter.Evidence{Source: ws[i].source, Locator: ws[i].locator + "(" + flag + ")"})
		}
		if !ok || val.unresolved {
			continue
		}
		loc := ws[i].locator + "(" + flag + ")"
		val.source = ws[i].source // located at the flag's element
		switch {
		case lmEval && flag == "--model-args":
			for _, kv := range strings.Split(val.text, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok && contains(lmEvalModelArgs, strings.TrimSpace(k)) {
					addModelValue(r.f, v, adapter.Declared, val.source, loc, "")
				}
			}
		case lmEval && flag == "--model":
			// lm-evaluation-harness: --model is the model type ("hf", "vllm").
		case modelFlags[flag] || llamaCpp && flag == "-m":
			if !serving && r.writes(val.text) {
				// A job's "--model_path /tmp/out" is where it writes.
				continue
			}
			addModelValue(r.f, val.text, adapter.Declared, val.source, loc, "")
		case servedNameFlags[flag]:
			if v := strings.TrimSpace(val.text); v != "" && !IsPlaceholder(v) && !strings.ContainsAny(v, " \t\n") {
				// An alias clients use, kept as written (redacted).
				r.served = append(r.served, adapter.Model{Name: RedactInto(v, loc, r.f), Confidence: adapter.Declared,
					Evidence: adapter.Evidence{Source: val.source, Locator: loc}})
			}
		case quantizationFlags[flag]:
			if v := strings.ToLower(strings.TrimSpace(val.text)); paramWord.MatchString(v) && r.quantization == "" {
				r.quantization = v
			}
		case flag == "--task" && (r.seen["vllm"] || r.in.ImageRuntime == "vllm"):
			// vLLM's --task: generate, embed, classify, score, reward, ...
			if v := strings.ToLower(strings.TrimSpace(val.text)); paramWord.MatchString(v) && v != "auto" && r.task == "" {
				r.task = v
			}
		case weakModelFlags[flag]:
			if hubID.MatchString(val.text) {
				addModelValue(r.f, val.text, adapter.Inferred, val.source, loc, "")
			}
		case storageFlags[flag]:
			if !IsPlaceholder(val.text) {
				r.f.Data = append(r.f.Data, adapter.Data{Name: RedactInto(val.text, loc, r.f), Kind: "model-repository",
					Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: val.source, Locator: loc}})
			}
		}
		if r.seen["triton"] && !r.seen["tensorrt-llm"] && strings.Contains(val.text, "tensorrtllm_backend") {
			r.runtime("tensorrt-llm", false, adapter.Evidence{Source: val.source, Locator: loc})
		}
	}
}

// finish attaches served names: to the models the command line names when
// there are any (the served name of that model), else as models of their
// own.
func (r *commandReader) finish() {
	// The quantisation and the task a server's flags give are the served
	// model's: every model the command line names (not one quoted in
	// inline Python).
	for i := range r.f.Models {
		m := &r.f.Models[i]
		if strings.HasSuffix(m.Evidence.Locator, "(python)") {
			continue
		}
		if m.Quantization == "" {
			m.Quantization = r.quantization
		}
		if m.Task == "" {
			m.Task = r.task
		}
	}
	if len(r.served) == 0 {
		return
	}
	served := r.served[0]
	attached := false
	// Every model the command line names (a flag or a positional argument;
	// not a model id quoted in inline Python) is the one it serves.
	for i := range r.f.Models {
		m := &r.f.Models[i]
		if !strings.HasSuffix(m.Evidence.Locator, "(python)") {
			if m.Name != served.Name && m.ServedName == "" {
				m.ServedName = served.Name
			}
			attached = true
		}
	}
	if !attached {
		addModelValue(r.f, served.Name, adapter.Declared, served.Evidence.Source, served.Evidence.Locator, "")
	}
}

// isOutputFlag reports whether a (normalised) flag names what a job
// writes: "--output-dir", "--output", "--save-path", "--export-dir",
// "--push-to-hub", "--hub-model-id".
func isOutputFlag(flag string) bool {
	return strings.Contains(flag, "output") || strings.HasPrefix(flag, "--save") || strings.HasPrefix(flag, "--export") ||
		flag == "--push-to-hub" || flag == "--hub-model-id"
}

// outputDirs are directory names where a job writes its results.
var outputDirs = map[string]bool{"out": true, "output": true, "outputs": true, "result": true, "results": true, "export": true, "exports": true}

// writes reports whether a path-like value is where the job writes: an
// output flag's value or below one, or a path with an output directory
// among its segments ("/tmp/out", "/workspace/output/ckpt").
func (r *commandReader) writes(v string) bool {
	v = strings.TrimRight(strings.Trim(strings.TrimSpace(v), `"'`), "/")
	if v == "" {
		return false
	}
	for _, o := range r.outputs {
		if o != "" && (v == o || strings.HasPrefix(v, o+"/")) {
			return true
		}
	}
	if !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "./") && !strings.HasPrefix(v, "../") {
		return false
	}
	for _, seg := range strings.Split(v, "/") {
		if outputDirs[strings.ToLower(seg)] {
			return true
		}
	}
	return false
}
