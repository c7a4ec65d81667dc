package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

const pinned = "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// workload is a Deployment named name running image with args.
func workload(name, image string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s}
spec:
  template:
    spec: {containers: [{name: c, image: %q, args: [%s]}]}
`, name, image, strings.Join(quoted, ", "))
}

// --exit-code N with --fail-on: each condition holds where it should and
// only there; the output is printed all the same; findings are named on
// stderr.
func TestExitCodeFailOn(t *testing.T) {
	good := workload("good", "vllm/vllm-openai:v0.6.3@"+pinned, "--model", "org/m")
	for _, tc := range []struct {
		name, input, failOn string
		want                int
		finding             string
	}{
		{"pinned, model and runtime known", good, "all", ExitOK, ""},
		{"image by tag only", workload("tag", "vllm/vllm-openai:v0.6.3", "--model", "org/m"), "image-unpinned", 5,
			"finding: image-unpinned: Deployment.apps default/tag: image docker.io/vllm/vllm-openai:v0.6.3 is not pinned by digest\n"},
		{"image by tag only, other condition", workload("tag", "vllm/vllm-openai:v0.6.3", "--model", "org/m"), "model-unresolved", ExitOK, ""},
		{"no model", workload("nomodel", "vllm/vllm-openai:v0.6.3@"+pinned), "model-unresolved", 5,
			"finding: model-unresolved: Deployment.apps default/nomodel: no model found\n"},
		{"no runtime", workload("noruntime", "example.com/server:1@"+pinned, "--model", "org/m"), "runtime-unresolved", 5,
			"finding: runtime-unresolved: Deployment.apps default/noruntime: no runtime found\n"},
		{"no AI signal", good + "---\n" + workload("web", "nginx:1.27@"+pinned), "no-ai-signal", 5,
			"finding: no-ai-signal: Deployment.apps default/web: no runtime, model, model storage, framework or accelerator found\n"},
		{"no AI signal is not a missing model", workload("web", "nginx:1.27@"+pinned), "model-unresolved,runtime-unresolved,image-unpinned", ExitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := writeFile(t, "in.yaml", tc.input)
			_, table, _ := run(t, "scan", f)
			code, out, errOut := run(t, "scan", f, "--exit-code", "5", "--fail-on", tc.failOn)
			require.Equal(t, tc.want, code, errOut)
			require.Equal(t, table, out, "the output is printed whatever the gate says")
			if tc.finding == "" {
				require.NotContains(t, errOut, "finding:")
				return
			}
			require.Contains(t, errOut, tc.finding)
			require.Contains(t, errOut, "aibom scan: 1 finding(s) of --fail-on ")
		})
	}

	// --exit-code alone fails on every condition; --report all does not
	// hide a root without AI signal from the gate.
	f := writeFile(t, "in.yaml", good+"---\n"+workload("web", "nginx:1.27"))
	code, _, errOut := run(t, "scan", f, "--exit-code", "1")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "finding: no-ai-signal: Deployment.apps default/web")
	require.NotContains(t, errOut, "image nginx", "a root without AI signal has no other findings")
	code, _, errOut = run(t, "scan", f, "--exit-code", "7", "--fail-on", "no-ai-signal", "--report", "all")
	require.Equal(t, 7, code, errOut)
	require.Contains(t, errOut, "finding: no-ai-signal: Deployment.apps default/web")
	// Repeated and comma-separated --fail-on mean the same.
	code, _, _ = run(t, "scan", f, "--exit-code", "7", "--fail-on", "model-unresolved", "--fail-on", "no-ai-signal")
	require.Equal(t, 7, code)

	// A finding wins over partial results (exit code 4).
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(workload("tag", "vllm/vllm-openai:v0.6.3", "--model", "org/m")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("kind: [\n"), 0o644))
	code, _, errOut = run(t, "scan", dir)
	require.Equal(t, ExitPartial, code, errOut)
	code, _, errOut = run(t, "scan", dir, "--exit-code", "9", "--fail-on", "image-unpinned")
	require.Equal(t, 9, code, errOut)
	code, _, errOut = run(t, "scan", dir, "--exit-code", "9", "--fail-on", "model-unresolved")
	require.Equal(t, ExitPartial, code, errOut)
}

// Gate flags that do not make sense are usage errors.
func TestExitCodeFailOnUsage(t *testing.T) {
	f := filepath.Join(manifests, "lws.yaml")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--fail-on", "image-unpinned"}, "--fail-on needs --exit-code N"},
		{[]string{"--exit-code", "3", "--fail-on", "everything"}, `--fail-on: unknown condition "everything"`},
		{[]string{"--exit-code", "200"}, "--exit-code must be between 0 and 125, not 200"},
		{[]string{"--exit-code", "-1"}, "--exit-code must be between 0 and 125, not -1"},
	} {
		code, out, errOut := run(t, append([]string{"scan", f}, tc.args...)...)
		require.Equal(t, ExitUsage, code, "%v: %s", tc.args, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, tc.msg)
	}
	_, out, _ := run(t, "__complete", "scan", "--fail-on", "model-unresolved,")
	require.Contains(t, out, "model-unresolved,image-unpinned\n")
}

// What a finding quotes from the input cannot drive the terminal.
func TestFindingsEscapeInput(t *testing.T) {
	f := writeFile(t, "in.yaml", workload("evil", "vllm/vllm-openai:v0.6.3\x1b[2J", "--model", "org/m"))
	code, _, errOut := run(t, "scan", f, "--exit-code", "5", "--fail-on", "image-unpinned")
	require.Equal(t, 5, code, errOut)
	require.NotContains(t, errOut, "\x1b")
	require.Contains(t, errOut, `image vllm/vllm-openai:v0.6.3\x1b[2J is not pinned by digest`)
}

// -o name: one kubectl-style name per root.
func TestOutputName(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", manifests, "-o", "name")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "dynamographdeployment.nvidia.com/vllm-agg\n"+
		"leaderworkerset.leaderworkerset.x-k8s.io/sglang-mn\n"+
		"nimservice.apps.nvidia.com/llama3-8b\n"+
		"cronjob.batch/nightly-eval\n", out)
	f := writeFile(t, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: solo}\nspec: {containers: [{name: c, image: \"vllm/vllm-openai:v0.6.3\"}]}\n")
	code, out, errOut = run(t, "scan", f, "-oname")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "pod/solo\n", out, "a core kind has no group")
}

// -o jsonpath=: a kubectl template over the documents as a list.
func TestOutputJSONPath(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", manifests, "-o", `jsonpath={range .items[*]}{.metadata.component.name}{"\t"}{.version}{"\n"}{end}`)
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "vllm-agg\t1\nsglang-mn\t1\nllama3-8b\t1\nnightly-eval\t1\n", out)

	code, out, errOut = run(t, "scan", "-f", manifests, "-o=jsonpath={.items[*].components[?(@.type==\"machine-learning-model\")].name}")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "Qwen/Qwen3-0.6B deepseek-ai/DeepSeek-R1-Distill-Qwen-32B meta/llama-3.1-8b-instruct mistralai/Mistral-7B-Instruct-v0.3", out)

	// A key some documents lack prints nothing, as in kubectl.
	code, out, errOut = run(t, "scan", "-f", manifests, "-o", "jsonpath={.items[*].nosuchkey}")
	require.Equal(t, ExitOK, code, errOut)
	require.Empty(t, out)

	// Values from the input are escaped, the template's own text is not.
	f := writeFile(t, "in.yaml", workload("evil", "vllm/vllm-openai:v0.6.3", "--model", "org/m\x1b]0;owned\x07"))
	code, out, errOut = run(t, "scan", f, "-o", `jsonpath={.items[0].components[?(@.type=="machine-learning-model")].name}{"\n"}`)
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, `org/m\x1b]0;owned\a`+"\n", out)

	for _, bad := range []string{"jsonpath=", "jsonpath={.items[", "jsonpathx"} {
		code, out, errOut = run(t, "scan", "-f", manifests, "-o", bad)
		require.Equal(t, ExitUsage, code, bad)
		require.Empty(t, out)
		require.Contains(t, errOut, "aibom scan: ", bad)
	}
}

// tree -o json: the forest as one object, nested as the text tree is.
func TestTreeJSON(t *testing.T) {
	code, out, errOut := run(t, "tree", filepath.Join(manifests, "dynamo.yaml"), "-o", "json")
	require.Equal(t, ExitOK, code, errOut)
	golden(t, "tree-dynamo.json", out)
	var forest struct {
		Roots []struct {
			Kind, Group, Name, Role string
			Children                []json.RawMessage
		}
		Outside []json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(out), &forest))
	require.Len(t, forest.Roots, 1)
	require.Equal(t, "DynamoGraphDeployment", forest.Roots[0].Kind)
	require.Equal(t, "nvidia.com", forest.Roots[0].Group)
	require.Equal(t, "root", forest.Roots[0].Role)
	require.NotEmpty(t, forest.Roots[0].Children)
	require.NotNil(t, forest.Outside, "always an array")

	_, out, _ = run(t, "__complete", "tree", "-o", "")
	require.Contains(t, out, "json\n")
}

// --out-dir honours -o cyclonedx-xml: .cdx.xml files, the documents in XML;
// with several roots the files are the output and stdout stays empty.
func TestOutDirXML(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "boms")
	code, out, errOut := run(t, "scan", "-f", manifests, "--out-dir", dir, "-o", "cyclonedx-xml")
	require.Equal(t, ExitOK, code, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "note: -o cyclonedx-xml with --out-dir: one file per root in "+dir)
	roots := loadRoots(t, manifests)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, len(roots))
	for _, r := range roots {
		got, err := os.ReadFile(filepath.Join(dir, r.AIBOMName+".cdx.xml"))
		require.NoError(t, err)
		want, err := document.ToXML([]byte(r.Document()))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}

	// One root: the BOM on stdout too, the same bytes as the file.
	dir = filepath.Join(t.TempDir(), "one")
	code, out, errOut = run(t, "scan", "-f", filepath.Join(manifests, "lws.yaml"), "--out-dir", dir, "-o", "cyclonedx-xml")
	require.Equal(t, ExitOK, code, errOut)
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.True(t, strings.HasSuffix(entries[0].Name(), ".cdx.xml"))
	got, err := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	require.NoError(t, err)
	require.Equal(t, out, string(got))

	// Without --out-dir, several roots are still an error for one BOM.
	code, _, _ = run(t, "scan", "-f", manifests, "-o", "cyclonedx-xml")
	require.Equal(t, ExitInput, code)
}

// A scan whose every input is skipped read nothing: exit code 1, not 4
// (partial), and nothing on stdout; one readable input among them is a
// partial result again.
func TestNothingReadable(t *testing.T) {
	big := writeFile(t, "big.yaml", deployment)
	for name, args := range map[string][]string{
		"a device":         {"/dev/zero"},
		"over the limit":   {big, "--max-file-bytes", "10"},
		"malformed stdin":  {"-"},
		"two unreadables":  {"/dev/zero", "/dev/null"},
		"device via stdin": {"-f", "/dev/zero"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runStdin(t, "kind: [\n", append([]string{"scan"}, args...)...)
			require.Equal(t, ExitInput, code, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, "file skipped")
			require.Contains(t, errOut, "aibom scan: nothing could be read: every input was skipped")
		})
	}
	code, out, errOut := run(t, "scan", "/dev/zero", big)
	require.Equal(t, ExitPartial, code, errOut)
	require.Contains(t, out, " web ")
	code, _, _ = run(t, "tree", "/dev/zero")
	require.Equal(t, ExitInput, code)
	code, _, _ = run(t, "diff", filepath.Join(manifests, "..", "..", "..", "cli", "testdata", "golden", "scan.json"), "-f", "/dev/zero")
	require.Equal(t, DiffError, code)
}

// -n completes the cluster's namespaces; without a cluster, nothing, and
// no error.
func TestNamespaceCompletion(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":[
			{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"team-b"}},
			{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"team-a"}},
			{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"kube-system"}},
			{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"evil\u001b[2J"}}]}`)
	}))
	defer srv.Close()
	kubeconfig := writeFile(t, "kubeconfig", fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, srv.URL))

	for _, cmd := range []string{"scan", "tree", "diff", "export"} {
		code, out, errOut := run(t, "__complete", cmd, "--kubeconfig", kubeconfig, "-n", "")
		require.Equal(t, ExitOK, code, errOut)
		require.Equal(t, "kube-system\nteam-a\nteam-b\n:4\n", out, cmd)
	}
	_, out, _ := run(t, "__complete", "scan", "--kubeconfig", kubeconfig, "--namespace", "team-")
	require.Equal(t, "team-a\nteam-b\n:4\n", out)

	// No cluster behind the kubeconfig, or no kubeconfig at all: nothing.
	srv.Close()
	code, out, errOut := run(t, "__complete", "scan", "--kubeconfig", kubeconfig, "-n", "")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, ":4\n", out)
	code, out, errOut = run(t, "__complete", "scan", "--kubeconfig", filepath.Join(t.TempDir(), "none"), "-n", "")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, ":4\n", out)
}
