package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - {name: vllm, image: "vllm/vllm-openai:v0.6.3", args: [--model, a/b]}
`

// A malformed file is named (file:line) and skipped; the rest is printed
// and the exit code says the result is partial.
func TestMalformedFileIsPartial(t *testing.T) {
	for _, tc := range []struct {
		name, content, msg string
	}{
		{"malformed YAML", deployment + "---\n# second\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [oops\n", ":15: error converting YAML to JSON: yaml: line 15: "},
		{"no kind", deployment + "---\n\n# a comment\napiVersion: v1\nmetadata: {name: x}\n", ":13: object without apiVersion or kind; file skipped\n"},
		{"no name", "apiVersion: v1\nkind: Pod\nmetadata: {}\n", ":1: Pod without metadata.name or metadata.generateName; file skipped\n"},
		{"content after a separator", deployment + "--- {a: b}\n", ":10: invalid Yaml document separator: {a: b}; file skipped\n"},
		{"JSON stream with garbage", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}` + "\n{]\n", ":2: invalid character ']'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			good := filepath.Join(dir, "a-good.yaml")
			bad := filepath.Join(dir, "b-bad.yaml")
			require.NoError(t, os.WriteFile(good, []byte(strings.Replace(deployment, "name: web", "name: good", 1)), 0o644))
			require.NoError(t, os.WriteFile(bad, []byte(tc.content), 0o644))
			code, out, errOut := run(t, "scan", dir)
			require.Equal(t, ExitPartial, code, errOut)
			require.Contains(t, errOut, "error: "+bad+tc.msg)
			require.Contains(t, out, "default    Deployment  good ", "the rest is scanned and printed")
			require.NotContains(t, out, " web ", "nothing of the skipped file")
		})
	}
}

func TestMissingFile(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", "testdata/no-such-file.yaml")
	require.Equal(t, ExitInput, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "testdata/no-such-file.yaml")
}

func TestUnknownKindsAreKeptAndNoted(t *testing.T) {
	// A Deployment controlled by a kind no adapter knows is absorbed by that
	// owner, a generic root; the owner is kept (not an error) and counted in
	// a note.
	f := writeFile(t, "unknown.yaml", `apiVersion: example.com/v1
kind: ModelServer
metadata: {name: ms}
---
apiVersion: example.com/v1
kind: ModelServer
metadata: {name: ms2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
---
`+strings.Replace(deployment, "  name: web\n", "  name: web\n  ownerReferences: [{apiVersion: example.com/v1, kind: ModelServer, name: ms, controller: true}]\n", 1))
	code, out, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "note: 3 object(s) of kinds no enabled adapter knows were kept and read as generic roots where they own workloads or embed pod templates with an AI signal: ConfigMap (1), ModelServer.example.com (2)\n"+
		"note: 1 generic root(s) reported (a kind no adapter knows, a Pod nobody controls), read generically; a profile for their kinds would make them precise: ModelServer.example.com default/ms\n", errOut)
	require.Contains(t, out, "default    ModelServer  ms    vllm     a/b     Deployment.apps/web")
	require.NotContains(t, out, "default    Deployment  web ")
}

// The same object in two files: the later one wins with a warning naming
// both positions (exit 3 with --strict). Twice in one file: an error.
func TestDuplicateObjects(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	b := filepath.Join(dir, "b.yaml")
	require.NoError(t, os.WriteFile(a, []byte(deployment), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("# again, explicitly in default\n"+strings.Replace(strings.Replace(deployment, "  name: web\n", "  name: web\n  namespace: default\n", 1), "a/b", "c/d", 1)), 0o644))

	code, out, errOut := run(t, "scan", dir)
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "warning: duplicate Deployment.apps default/web at "+a+":1 and "+b+":2: the last one read is kept\n", errOut)
	require.Contains(t, out, " c/d ", "the later one is kept")
	require.Equal(t, 2, strings.Count(out, "\n"), "one root")

	code, out, errOut = run(t, "scan", dir, "--strict")
	require.Equal(t, ExitDuplicate, code)
	require.Empty(t, out)
	require.Equal(t, "aibom scan: duplicate objects:\n  Deployment.apps default/web at "+a+":1 and "+b+":2 (--strict)\n", errOut)

	same := writeFile(t, "same.yaml", deployment+"---\n"+strings.Replace(deployment, "a/b", "c/d", 1))
	code, out, errOut = run(t, "scan", same)
	require.Equal(t, ExitDuplicate, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "Deployment.apps default/web at "+same+":1 and "+same+":11 (twice in one file; --allow-duplicates keeps the last)")

	code, out, errOut = run(t, "scan", same, "--allow-duplicates")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, " c/d ")
}

func TestDuplicateInAList(t *testing.T) {
	f := writeFile(t, "list.json", `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}}
]}`)
	code, _, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitDuplicate, code)
	require.Contains(t, errOut, "ConfigMap default/x at "+f+":1 (items[0]) and "+f+":1 (items[1]) (twice in one file")
}

func TestSameNameOtherKindOrNamespaceIsNoDuplicate(t *testing.T) {
	f := writeFile(t, "ok.yaml", deployment+"---\n"+strings.Replace(deployment, "kind: Deployment", "kind: StatefulSet", 1)+
		"---\n"+strings.Replace(deployment, "  name: web\n", "  name: web\n  namespace: other\n", 1))
	code, out, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, 4, strings.Count(out, "\n"))
}

func TestUnresolvedOwnerIsNoted(t *testing.T) {
	f := writeFile(t, "orphan.yaml", `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-123
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: gone, controller: true}]
`+"---\n"+strings.Replace(deployment, "  name: web\n", "  name: web\n  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: gone, controller: true}]\n", 1))
	code, out, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, errOut, "note: "+f+":1: ReplicaSet default/web-123: controller ownerReference to Deployment gone names no object in the input; the ownership walk stops there\n")
	require.Contains(t, errOut, "note: "+f+":7: Deployment default/web: controller ownerReference to Deployment gone")
	require.Contains(t, out, "default    Deployment  web ", "a workload whose owner is missing is reported as a root, as the controller does")
}

func TestNamespaceFlagAndOptIn(t *testing.T) {
	f := writeFile(t, "ns.yaml", `apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {aibom.dev/enabled: "true"}}
---
`+deployment+"---\n"+strings.Replace(deployment, "  name: web\n", "  name: other\n  namespace: elsewhere\n", 1))
	code, out, errOut := run(t, "scan", "-f", f, "-n", "team")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "\nelsewhere  Deployment  other")
	require.Contains(t, out, "\nteam       Deployment  web")

	code, out, errOut = run(t, "scan", "-f", f, "-n", "team", "--require-opt-in")
	require.Equal(t, ExitOK, code, errOut)
	require.NotContains(t, out, "elsewhere")
	require.Contains(t, out, "\nteam ")
	require.Equal(t, "note: --require-opt-in: namespace(s) without aibom.dev/enabled=true in the input were not reported: elsewhere\n", errOut)
}

func TestScrapeFailureIsPartial(t *testing.T) {
	// spec.image of the wrong type: the NIM adapter refuses the object. The
	// other root is still reported; the exit code says the result is partial.
	f := writeFile(t, "partial.yaml", deployment+`---
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: broken}
spec:
  image: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3
`)
	code, out, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitPartial, code)
	require.Contains(t, errOut, "error: NIMService.apps.nvidia.com default/broken: scrape: ")
	require.Contains(t, out, "default    NIMService  broken  -        -       -         error\n")
	require.Contains(t, out, "default    Deployment  web ")

	code, out, _ = run(t, "scan", "-f", f, "-o", "json")
	require.Equal(t, ExitPartial, code)
	var docs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &docs))
	require.Len(t, docs, 1, "one document: the Deployment's")
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{nil, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "aibom"`},
		{[]string{"scan", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"scan", "-Z"}, "unknown shorthand flag: 'Z' in -Z"},
		{[]string{"scan", "--adapter-plugin", "x"}, "no such file or directory; refusing to start it"},
		{[]string{"scan", "-f", manifests, "--output", "xml"}, `--output must be one of table, wide, name, json, yaml, jsonpath=TEMPLATE, cyclonedx-json, cyclonedx-xml, not "xml"`},
		{[]string{"scan", "-f", manifests, "-A"}, "--all-namespaces reads a cluster"},
		{[]string{"scan", "-f", manifests, "--kubeconfig", "x"}, "give one or the other"},
		{[]string{"scan", "-f", manifests, "--ignore-opt-in"}, "--ignore-opt-in is for a cluster"},
		{[]string{"scan", "-f", manifests, "--strict", "--allow-duplicates"}, "give --allow-duplicates or --strict, not both"},
		{[]string{"scan", "--require-opt-in"}, "--require-opt-in is for -f"},
		{[]string{"scan", "-R"}, "--recursive is for -f"},
		{[]string{"scan", "-n", "a", "-A"}, "give -n or --all-namespaces, not both"},
		{[]string{"scan", "-f", manifests, "--adapters", "apps,nope"}, `unknown adapter "nope"`},
		{[]string{"scan", "-f", manifests, "--report", "some"}, `--report must be ai or all, not "some"`},
		{[]string{"scan", "-f", manifests, "--progress", "maybe"}, `--progress must be auto, always or never`},
		{[]string{"scan", "-f", manifests, "--max-file-bytes", "lots"}, `invalid argument "lots" for "--max-file-bytes"`},
		{[]string{"version", "x"}, `unknown command "x" for "aibom version"`},
		{[]string{"tree", "-f", manifests, "-o", "svg"}, `--output must be text, dot or json, not "svg"`},
		{[]string{"diff"}, "accepts between 1 and 2 arg(s), received 0"},
	} {
		code, out, errOut := run(t, tc.args...)
		require.Equal(t, ExitUsage, code, "%v: %s", tc.args, errOut)
		require.Empty(t, out, "%v", tc.args)
		require.Contains(t, errOut, tc.msg, "%v", tc.args)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"scan", "-h"}, {"help", "scan"}, {"scan", "-help"}, {"tree", "--help"}, {"diff", "-h"}} {
		code, out, _ := run(t, args...)
		require.Equal(t, ExitOK, code, "%v", args)
		require.Contains(t, out, "Usage:", "%v", args)
		require.Contains(t, out, "Examples:", "%v", args)
	}
	_, out, _ := run(t, "scan", "--help")
	require.Contains(t, out, "Exit codes: 0 success; 1 unreadable input")
	for _, flag := range []string{"-f, --filename stringArray", "-o, --output string", "-n, --namespace string", "-A, --all-namespaces", "-R, --recursive", "--allow-duplicates", "--strict", "--max-file-bytes int"} {
		require.Contains(t, out, flag)
	}
}

func TestVersionAndAdapters(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		code, out, _ := run(t, args...)
		require.Equal(t, ExitOK, code, "%v", args)
		require.Equal(t, "aibom test (CycloneDX 1.6, adapter contract v1)\n", out, "%v", args)
	}

	code, out, _ := run(t, "adapters")
	require.Equal(t, ExitOK, code)
	golden(t, "adapters.txt", out)

	code, out, _ = run(t, "adapters", "--adapters", "batch")
	require.Equal(t, ExitOK, code)
	require.Equal(t, "ADAPTER  SOURCE   KIND           ROLE       VERSIONS  POD OWNERS  PATH\n"+
		"core     core     Pod            walk-only  v1        -           -\n"+
		"batch    in-tree  Job.batch      tracked    v1        Job.batch   -\n"+
		"batch    in-tree  CronJob.batch  tracked    v1        Job.batch   -\n", out)

	// The listing builds the registry as a scan does: a profile claiming a
	// kind an enabled adapter claims is refused, and -o json is JSON.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.yaml"), []byte(`apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: jobs}
spec:
  version: 0.1.0
  kinds: [{group: batch, kind: Job, resource: jobs, versions: [v1], role: tracked}]
`), 0o600))
	code, _, errOut := run(t, "adapters", "--adapters", "batch", "--adapter-profile", filepath.Join(dir, "jobs.yaml"))
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "claimed by both")
	code, out, _ = run(t, "adapters", "--adapters", "batch", "-o", "json")
	require.Equal(t, ExitOK, code)
	require.True(t, json.Valid([]byte(out)), out)
}

func TestAdaptersFlagRestrictsKinds(t *testing.T) {
	// Without the dynamo adapter the graph's kinds are unknown (kept and
	// noted): the Deployments, whose controllers are of a kind no adapter
	// declares, roll up through them into the graph, their topmost
	// controller owner: a generic root, as on a controller that may read
	// those kinds.
	code, out, errOut := run(t, "scan", "-f", filepath.Join(manifests, "dynamo.yaml"), "--adapters", "apps")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "DynamoGraphDeployment  vllm-agg  vllm     Qwen/Qwen3-0.6B  Deployment.apps/vllm-agg-frontend,Deployment.apps/vllm-agg-vllmdecodeworker  2/2")
	require.NotContains(t, out, "default    Deployment ")
	require.Contains(t, errOut, "DynamoComponentDeployment.nvidia.com (2), DynamoGraphDeployment.nvidia.com (1)")
}

// What stderr quotes from the input cannot drive the terminal.
func TestStderrEscapesInput(t *testing.T) {
	f := writeFile(t, "evil.yaml", "apiVersion: v1\nkind: \"Evil\\u001b[2J\"\nmetadata: {}\n---\n"+
		"apiVersion: v1\nkind: \"Dup\\u001b[31m\"\nmetadata: {name: x}\n---\napiVersion: v1\nkind: \"Dup\\u001b[31m\"\nmetadata: {name: x}\n")
	code, _, errOut := run(t, "scan", f)
	require.Equal(t, ExitInput, code, "the one file is skipped: nothing was read")
	require.NotContains(t, errOut, "\x1b")
	require.Contains(t, errOut, `Evil\x1b[2J without metadata.name`)

	g := writeFile(t, "dup.yaml", "apiVersion: v1\nkind: \"Dup\\u001b[31m\"\nmetadata: {name: x}\n---\napiVersion: v1\nkind: \"Dup\\u001b[31m\"\nmetadata: {name: x}\n")
	code, _, errOut = run(t, "scan", g)
	require.Equal(t, ExitDuplicate, code)
	require.NotContains(t, errOut, "\x1b")
	require.Contains(t, errOut, `Dup\x1b[31m default/x at `)
}
