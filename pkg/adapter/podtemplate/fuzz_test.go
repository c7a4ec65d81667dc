package podtemplate

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// FuzzScrapeTemplate feeds arbitrary JSON to ScrapeTemplate: it must never
// panic, and must give the same result twice.
func FuzzScrapeTemplate(f *testing.F) {
	vllm, err := yaml.YAMLToJSON([]byte(vllmTemplate))
	require.NoError(f, err)
	for _, seed := range []string{
		string(vllm),
		`{}`,
		`null`,
		`{"spec":{"containers":"x"}}`,
		`{"spec":{"containers":[null,1,"x",{"args":{"a":1}}]}}`,
		`{"spec":{"containers":[{"name":"c","image":"vllm/vllm-openai:v0.6.3","args":["--model"],"env":[{"name":"HF_MODEL_ID","valueFrom":{}}]}]}}`,
		`{"metadata":{"annotations":{"model.aibom.dev/x":["a"]}},"spec":{"volumes":7}}`,
		`{"spec":{"containers":[{"volumeMounts":[{"name":"v","mountPath":"/models"}]}],"volumes":[{"name":"v","hostPath":{"path":1}}]}}`,
		`{"spec":{"initContainers":[{"restartPolicy":"Always","image":"ollama/ollama:0.5.7","command":["vllm","serve"]}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tmpl map[string]any
		if json.Unmarshal(data, &tmpl) != nil {
			return
		}
		opts := Options{WorkloadAnnotations: map[string]string{"model.aibom.dev/m": string(data)}}
		first, err1 := ScrapeTemplate(tmpl, "spec.template", opts)
		second, err2 := ScrapeTemplate(tmpl, "spec.template", opts)
		require.Equal(t, err1, err2)
		require.Equal(t, first, second)
		_, _ = ScrapePodSpec(tmpl, "spec.podSpec", opts)
		_, _ = ScrapeContainer(tmpl, "c", ContainerOptions{})
		ParseImage(string(data))
		RuntimeFromImage(string(data))
		Redact(string(data))
	})
}

// FuzzReadCommand feeds arbitrary shell scripts (the argument of "sh -c")
// and args to ReadCommand: it must never panic, must give the same findings
// twice, and every model it names must come with a locator inside the
// container.
func FuzzReadCommand(f *testing.F) {
	for _, seed := range []struct{ script, arg string }{
		{"vllm serve org/m --port 8000", ""},
		{"python3 -m vllm.entrypoints.openai.api_server --model $MODEL_PATH \\\n  --served-model-name x", "a"},
		{"MODEL_ID=\"${YLLM_MODEL:-Qwen/Qwen3-0.6B}\"\nhf download \"$MODEL_ID\" --local-dir /m", ""},
		{"python3 - << EOF\nfrom huggingface_hub import snapshot_download\nsnapshot_download(repo_id=\"org/m\")\nEOF\n", ""},
		{"exec trl sft \"$@\"", "--model_name_or_path=org/m"},
		{"if [ -d x ]; then ollama pull llama3:8b; fi; ollama serve &", ""},
		{"echo $(( 1 + ${#X} )) ${X/a/b} `date` <(ls) ${!Y} ${Z:?err}", ""},
		{"lm_eval --model vllm --model_args pretrained=org/m,dtype=auto", ""},
		{"'unterminated", ""},
		{"a && b || c | d; (e); { f; }", "\x00"},
	} {
		f.Add(seed.script, seed.arg)
	}
	f.Fuzz(func(t *testing.T, script, arg string) {
		in := CommandInput{
			Command: []string{"/bin/sh", "-c", script, "--"}, Args: []string{arg},
			Env: map[string]string{"MODEL_PATH": "org/p", "YLLM_MODEL": arg}, ContainerPath: "c",
		}
		first := ReadCommand(in)
		second := ReadCommand(in)
		require.Equal(t, first, second)
		for _, m := range first.Models {
			require.NotEmpty(t, m.Name)
			require.True(t, len(m.Evidence.Locator) > 2 && m.Evidence.Locator[:2] == "c.", m.Evidence.Locator)
		}
	})
}

// FuzzRedactURLSecrets puts a secret in every credential-bearing place of a
// URL or location and requires that Redact never lets it through.
func FuzzRedactURLSecrets(f *testing.F) {
	for _, seed := range []struct {
		secret string
		form   uint8
	}{
		{"wJalr/K7MDENG/bPxRfiCY", 0}, {"p@ssw0rd", 1}, {"hf_abcdefgh12345678", 2},
		{"hunter22", 3}, {"tok.en-123", 4}, {"a@b/c@d", 5},
	} {
		f.Add(seed.secret, seed.form)
	}
	forms := []func(string) string{
		func(s string) string { return "s3://AKIAZ7FAKE2TESTONLY9:" + s + "@bucket/models" },
		func(s string) string { return "https://user:" + s + "@host.example/x" },
		func(s string) string { return "https://host.example/m?hf_token=" + s + "&rev=main" },
		func(s string) string { return "alice:" + s + "@nas.example:/models" },
		func(s string) string { return "https://host.example/cb#access-token=" + s },
		func(s string) string { return "--model=https://u:" + s + "@h.example/m?x=1" },
	}
	secretShape := regexp.MustCompile(`^[A-Za-z0-9/+@._-]{8,64}$`)
	f.Fuzz(func(t *testing.T, secret string, form uint8) {
		if !secretShape.MatchString(secret) || strings.HasPrefix(secret, "/") || strings.HasSuffix(secret, "/") {
			return
		}
		build := forms[int(form)%len(forms)]
		if strings.Contains(build(""), secret) {
			return // the secret is part of the template itself
		}
		in := build(secret)
		out, reasons := Redact(in)
		require.NotContains(t, out, secret, "input %q", in)
		require.NotEmpty(t, reasons)
	})
}
