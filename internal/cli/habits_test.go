package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// Flags the way kubectl and trivy users type them, and the single-dash
// long forms the command line used to take, all mean the same.
func TestFlagForms(t *testing.T) {
	lws := filepath.Join(manifests, "lws.yaml")
	_, want, _ := run(t, "scan", "--filename", lws, "--output", "json", "--namespace", "team")
	require.Contains(t, want, `"team"`)
	for _, args := range [][]string{
		{"scan", "-f", lws, "-o", "json", "-n", "team"},
		{"scan", "-f", lws, "-ojson", "-nteam"},
		{"scan", "-f=" + lws, "-o=json", "-n=team"},
		{"scan", "--filename=" + lws, "--output=json", "--namespace=team"},
		{"scan", lws, "-o", "json", "-n", "team"},                        // a positional path is -f
		{"scan", "-o", "json", "-n", "team", "--", lws},                  // after --
		{"scan", "-filename", lws, "-output", "json", "-namespace=team"}, // Go-style single dash
		{"scan", "-R", "-f", lws, "-ojson", "-nteam"},
	} {
		code, out, errOut := run(t, args...)
		require.Equal(t, ExitOK, code, "%v: %s", args, errOut)
		require.Equal(t, want, out, "%v", args)
	}
	// Shorthands combine: -A with a value-taking flag after it.
	code, _, errOut := run(t, "scan", "-f", lws, "-Ao", "json")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "--all-namespaces reads a cluster", "-A was understood")
}

// "-f -" and "-" read standard input.
func TestStdin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(manifests, "lws.yaml"))
	require.NoError(t, err)
	_, want, _ := run(t, "scan", filepath.Join(manifests, "lws.yaml"))
	for _, args := range [][]string{{"scan", "-f", "-"}, {"scan", "-"}} {
		code, out, errOut := runStdin(t, string(data), args...)
		require.Equal(t, ExitOK, code, errOut)
		require.Equal(t, want, out)
	}
	code, _, errOut := runStdin(t, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [x\n", "scan", "-")
	require.Equal(t, ExitInput, code, "the only input is skipped: nothing was read")
	require.Contains(t, errOut, "error: <stdin>:4: ", "stdin positions are named too")
}

const vllm = `apiVersion: apps/v1
kind: Deployment
metadata: {name: %s}
spec:
  template:
    spec: {containers: [{name: c, image: "vllm/vllm-openai:v0.6.3", args: [--model, org/%s]}]}
`

func deploymentNamed(name string) string { return strings.ReplaceAll(vllm, "%s", name) }

// The two inputs that used to lose objects without a word: a document
// separator followed by a comment, and a stream of several JSON objects.
func TestNoSilentLoss(t *testing.T) {
	for name, content := range map[string]string{
		"separator with a comment": deploymentNamed("first") + "--- # second deployment\n" + deploymentNamed("second"),
		"stream of JSON objects": `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "first"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "vllm/vllm-openai:v0.6.3"}]}}}}
{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "second"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "vllm/vllm-openai:v0.6.3"}]}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := writeFile(t, "in.yaml", content)
			code, out, errOut := run(t, "scan", f)
			require.Equal(t, ExitOK, code, errOut)
			require.Contains(t, out, " first ")
			require.Contains(t, out, " second ")
		})
	}
}

// -R reads a folder's whole tree; without it, subfolders are not read.
func TestRecursive(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "team", "llm"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "top.yaml"), []byte(deploymentNamed("top")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "team", "llm", "deep.yml"), []byte(deploymentNamed("deep")), 0o644))
	_, out, _ := run(t, "scan", dir)
	require.Contains(t, out, " top ")
	require.NotContains(t, out, " deep ")
	code, out, errOut := run(t, "scan", "-R", dir)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, " top ")
	require.Contains(t, out, " deep ")
}

// A RayJob sample with only metadata.generateName is scanned under a
// stable synthetic name, said so on stderr.
func TestGenerateName(t *testing.T) {
	f := writeFile(t, "rayjob.yaml", `apiVersion: ray.io/v1
kind: RayJob
metadata:
  generateName: llm-batch-
spec:
  entrypoint: python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
          - {name: ray-head, image: "rayproject/ray-llm:2.44.0-py311-cu124"}
`)
	code, out, errOut := run(t, "scan", f)
	require.Equal(t, ExitOK, code, errOut)
	m := regexp.MustCompile(`named (llm-batch-[a-z0-9]{5}) offline`).FindStringSubmatch(errOut)
	require.NotNil(t, m, errOut)
	require.Contains(t, errOut, "note: "+f+`:1: RayJob has metadata.generateName "llm-batch-" and no name: named `)
	require.Contains(t, out, "RayJob  "+m[1]+" ")
	_, again, _ := run(t, "scan", f)
	require.Equal(t, out, again, "the same name every time")
}

// -o wide adds the kind's group, image count, confidence and AIBOM name;
// -o yaml holds the documents -o json holds.
func TestWideAndYAML(t *testing.T) {
	code, out, errOut := run(t, "scan", manifests, "-o", "wide")
	require.Equal(t, ExitOK, code, errOut)
	golden(t, "wide.txt", out)

	_, j, _ := run(t, "scan", manifests, "-o", "json")
	code, y, errOut := run(t, "scan", manifests, "-o", "yaml")
	require.Equal(t, ExitOK, code, errOut)
	fromYAML, err := yaml.YAMLToJSON([]byte(y))
	require.NoError(t, err)
	var a, b []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(j), &a))
	require.NoError(t, json.Unmarshal(fromYAML, &b))
	require.Len(t, b, len(a))
	for i := range a {
		require.JSONEq(t, string(a[i]), string(b[i]))
	}
}

// Shell completion scripts, and completion of flag values.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errOut := run(t, "completion", shell)
		require.Equal(t, ExitOK, code, errOut)
		require.Contains(t, out, "aibom", shell)
	}
	code, out, _ := run(t, "__complete", "scan", "-o", "")
	require.Equal(t, ExitOK, code)
	for _, o := range scanOutputs {
		require.Contains(t, out, o+"\n")
	}
	_, out, _ = run(t, "__complete", "tree", "--output", "")
	require.Contains(t, out, "dot\n")
}

// "aibom tree" from manifests: the forest, or Graphviz.
func TestTreeCommand(t *testing.T) {
	code, out, errOut := run(t, "tree", filepath.Join(manifests, "dynamo.yaml"))
	require.Equal(t, ExitOK, code, errOut)
	golden(t, "tree-dynamo.txt", out)

	code, out, errOut = run(t, "tree", "-f", filepath.Join(manifests, "lws.yaml"), "-o", "dot")
	require.Equal(t, ExitOK, code, errOut)
	require.True(t, strings.HasPrefix(out, "digraph aibom {\n"))
	require.Contains(t, out, `label="default/Pod/sglang-mn-0\npod\nsglang-leader sha256:2b3c4d5e6f70"`)
}

// "aibom diff" of two documents, two folders, and a folder against a scan:
// exit 1 and the change when a digest changed, exit 0 and nothing when
// nothing did.
func TestDiffCommand(t *testing.T) {
	lws := filepath.Join(manifests, "lws.yaml")
	data, err := os.ReadFile(lws)
	require.NoError(t, err)
	const before, after = "2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a", "ffff4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a"
	changed := writeFile(t, "lws.yaml", strings.ReplaceAll(string(data), before, after))

	dirA, dirB := t.TempDir(), t.TempDir()
	_, docA, _ := run(t, "scan", lws, "-o", "cyclonedx-json", "--out-dir", dirA)
	_, docB, _ := run(t, "scan", changed, "-o", "cyclonedx-json", "--out-dir", dirB)
	fileA, fileB := writeFile(t, "a.cdx.json", docA), writeFile(t, "b.cdx.json", docB)

	for name, args := range map[string][]string{
		"documents":      {"diff", fileA, fileB},
		"folders":        {"diff", dirA, dirB},
		"folder vs scan": {"diff", dirA, "-f", changed},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, args...)
			require.Equal(t, DiffDifferent, code, errOut)
			golden(t, "diff-digest.txt", out)

			code, out, errOut = run(t, append(args, "-o", "json")...)
			require.Equal(t, DiffDifferent, code, errOut)
			golden(t, "diff-digest.json", out)
		})
	}

	code, out, errOut := run(t, "diff", dirA, "-f", lws)
	require.Equal(t, DiffSame, code, errOut)
	require.Empty(t, out)
	code, out, _ = run(t, "diff", fileA, fileA, "-o", "json")
	require.Equal(t, DiffSame, code)
	require.Equal(t, "{\n  \"different\": false,\n  \"workloads\": []\n}\n", out)

	// A scan side that is partial says so (exit 4); errors are exit 2.
	bad := writeFile(t, "bad.yaml", "apiVersion: v1\nkind: [\n")
	code, _, errOut = run(t, "diff", dirA, "-f", lws, "-f", bad)
	require.Equal(t, DiffPartial, code, errOut)
	code, _, errOut = run(t, "diff", dirA, filepath.Join(dirA, "missing"))
	require.Equal(t, DiffError, code)
	require.Contains(t, errOut, "missing")
	code, _, errOut = run(t, "diff", fileA, fileB, "-n", "team")
	require.Equal(t, DiffError, code)
	require.Contains(t, errOut, "with two sides to compare, only -o applies")
}
