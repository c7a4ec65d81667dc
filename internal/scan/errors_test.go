package scan

import (
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

func TestMalformedYAML(t *testing.T) {
	f := writeFile(t, "bad.yaml", deployment+"---\n# second\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [oops\n")
	code, out, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitInput, code)
	require.Empty(t, out, "nothing on stdout")
	require.Contains(t, errOut, f+":15: ", "file and the line the parser stopped at")
	require.Contains(t, errOut, "yaml: line 15:")
}

func TestObjectWithoutKind(t *testing.T) {
	f := writeFile(t, "nokind.yaml", deployment+"---\n\n# a comment\napiVersion: v1\nmetadata: {name: x}\n")
	code, out, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitInput, code)
	require.Empty(t, out)
	require.Equal(t, "aibom scan: "+f+":13: object without apiVersion or kind\n", errOut)
}

func TestObjectWithoutName(t *testing.T) {
	f := writeFile(t, "noname.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {}\n")
	code, _, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitInput, code)
	require.Equal(t, "aibom scan: "+f+":1: Pod without metadata.name (or metadata.generateName)\n", errOut)
}

func TestMissingFile(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", "testdata/no-such-file.yaml")
	require.Equal(t, ExitInput, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "testdata/no-such-file.yaml")
}

func TestUnknownKindsAreKeptAndNoted(t *testing.T) {
	// A Deployment controlled by a kind no adapter knows stays a root; the
	// owner is kept (not an error) and counted in a note.
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
	require.Equal(t, "note: 3 object(s) of kinds no enabled adapter knows were kept (they can own workloads, but get no document): ConfigMap (1), ModelServer.example.com (2)\n", errOut)
	require.Contains(t, out, "default    Deployment  web ")
}

func TestDuplicateObjects(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	b := filepath.Join(dir, "b.yaml")
	require.NoError(t, os.WriteFile(a, []byte(deployment), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("# again, explicitly in default\n"+strings.Replace(deployment, "  name: web\n", "  name: web\n  namespace: default\n", 1)+"---\n"+strings.Replace(deployment, "a/b", "c/d", 1)), 0o644))

	code, out, errOut := run(t, "scan", "-f", dir)
	require.Equal(t, ExitDuplicate, code)
	require.Empty(t, out)
	require.Equal(t, "aibom scan: duplicate objects (use --allow-duplicates to keep the last):\n  Deployment.apps default/web at "+a+":1 and "+b+":2 and "+b+":13\n", errOut)

	code, out, errOut = run(t, "scan", "-f", dir, "--allow-duplicates")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, errOut, "note: duplicate Deployment.apps default/web at "+a+":1 and "+b+":2 and "+b+":13: keeping the last\n")
	require.Contains(t, out, " c/d ", "the last one read is kept")
	require.Equal(t, 2, strings.Count(out, "\n"), "one root")
}

func TestDuplicateInAList(t *testing.T) {
	f := writeFile(t, "list.json", `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "default"}}
]}`)
	code, _, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitDuplicate, code)
	require.Contains(t, errOut, "ConfigMap default/x at "+f+":1 (items[0]) and "+f+":1 (items[1])")
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
	require.True(t, strings.HasPrefix(out, "{"), "one document: the Deployment's")
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{nil, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"scan", "--no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"scan", "--adapter-plugin", "x"}, "flag provided but not defined: -adapter-plugin"},
		{[]string{"scan", "-f", manifests, "--output", "yaml"}, `--output must be table, json or cyclonedx-xml, not "yaml"`},
		{[]string{"scan", "-f", manifests, "-A"}, "--all-namespaces reads a cluster"},
		{[]string{"scan", "-f", manifests, "--kubeconfig", "x"}, "give one or the other"},
		{[]string{"scan", "-f", manifests, "--ignore-opt-in"}, "--ignore-opt-in is for a cluster"},
		{[]string{"scan", "--require-opt-in"}, "--require-opt-in is for -f"},
		{[]string{"scan", "-n", "a", "-A"}, "give -n or --all-namespaces, not both"},
		{[]string{"scan", "-f", manifests, "--adapters", "apps,nope"}, `unknown adapter "nope"`},
		{[]string{"scan", "-f", manifests, "extra"}, `unexpected argument "extra"`},
		{[]string{"version", "x"}, `unexpected argument "x"`},
	} {
		code, out, errOut := run(t, tc.args...)
		require.Equal(t, ExitUsage, code, "%v: %s", tc.args, errOut)
		require.Empty(t, out, "%v", tc.args)
		require.Contains(t, errOut, tc.msg, "%v", tc.args)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"scan", "-h"}, {"help", "scan"}} {
		code, out, _ := run(t, args...)
		require.Equal(t, ExitOK, code, "%v", args)
		require.Contains(t, out, "Usage:", "%v", args)
	}
	_, out, _ := run(t, "scan", "--help")
	require.Contains(t, out, "Exit codes: 0 success; 1 unreadable input")
	require.Contains(t, out, "-allow-duplicates")
}

func TestVersionAndAdapters(t *testing.T) {
	code, out, _ := run(t, "version")
	require.Equal(t, ExitOK, code)
	require.Equal(t, "aibom test (CycloneDX 1.6, adapter contract v1)\n", out)

	code, out, _ = run(t, "adapters")
	require.Equal(t, ExitOK, code)
	golden(t, "adapters.txt", out)

	code, out, _ = run(t, "adapters", "--adapters", "batch")
	require.Equal(t, ExitOK, code)
	require.Equal(t, "ADAPTER  KIND           ROLE     VERSIONS\nbatch    Job.batch      tracked  v1\nbatch    CronJob.batch  tracked  v1\n", out)
}

func TestAdaptersFlagRestrictsKinds(t *testing.T) {
	// Without the dynamo adapter the graph's kinds are unknown (kept and
	// noted): the Deployments, whose controllers are of a kind no adapter
	// declares, are roots of their own, as on the controller.
	code, out, errOut := run(t, "scan", "-f", filepath.Join(manifests, "dynamo.yaml"), "--adapters", "apps")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "default    Deployment  vllm-agg-frontend ")
	require.Contains(t, out, "default    Deployment  vllm-agg-vllmdecodeworker ")
	require.Contains(t, errOut, "DynamoComponentDeployment.nvidia.com (2), DynamoGraphDeployment.nvidia.com (1)")
}
