package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/internal/version"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const manifests = "testdata/manifests"

func TestMain(m *testing.M) {
	// Documents name the tool's version: pin it, so that a build with
	// -ldflags -X .../version.Version does not change the golden files.
	version.Version = "test"
	os.Exit(m.Run())
}

// run runs the command line and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/scan -update to create it")
	require.Equal(t, string(want), got, "output differs from %s (go test ./internal/scan -update rewrites it)", path)
}

func TestGoldenTable(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", manifests)
	require.Equal(t, ExitOK, code, errOut)
	golden(t, "table.txt", out)
	require.Equal(t, "note: 2 object(s) of kinds no enabled adapter knows were kept (they can own workloads, but get no document): NIMCache.apps.nvidia.com (1), Service (1)\n", errOut)
}

func TestGoldenJSON(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", manifests, "--output", "json")
	require.Equal(t, ExitOK, code, errOut)
	golden(t, "scan.json", out)

	var docs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &docs))
	require.Len(t, docs, 4, "one document per root")
	for _, d := range docs {
		require.NoError(t, document.ValidateSchema(d))
	}
}

// loadRoots evaluates the golden manifests the way scan does.
func loadRoots(t *testing.T, paths ...string) []Root {
	t.Helper()
	adapters, err := intree.Select("all")
	require.NoError(t, err)
	reg, err := core.NewRegistry(adapters...)
	require.NoError(t, err)
	snap, err := LoadFiles(reg, FileOptions{Paths: paths})
	require.NoError(t, err)
	roots, err := Evaluate(context.Background(), reg, core.NewMemoryStore(snap.Objects),
		Options{Tool: document.Tool{Name: document.ToolName, Version: "test"}, MaxDocumentBytes: DefaultMaxDocumentBytes})
	require.NoError(t, err)
	return roots
}

// docDigests maps "<group>/<container>" to the sha256 hex of each container
// component of a document ("" when unresolved).
func docDigests(t *testing.T, doc string) map[string]string {
	t.Helper()
	var bom struct {
		Components []struct {
			Type   string `json:"type"`
			Hashes []struct {
				Alg     string `json:"alg"`
				Content string `json:"content"`
			} `json:"hashes"`
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &bom))
	out := map[string]string{}
	for _, c := range bom.Components {
		if c.Type != "container" {
			continue
		}
		// A component lists every container that runs its image: the i-th
		// name with the i-th group.
		var groups, names []string
		for _, p := range c.Properties {
			switch p.Name {
			case "aibom.container.group":
				groups = append(groups, p.Value)
			case "aibom.container.name":
				names = append(names, p.Value)
			}
		}
		d := ""
		if len(c.Hashes) > 0 {
			require.Equal(t, "SHA-256", c.Hashes[0].Alg)
			d = c.Hashes[0].Content
		}
		for i, name := range names {
			group := ""
			if i < len(groups) {
				group = groups[i]
			}
			out[group+"/"+name] = d
		}
	}
	return out
}

func TestOneDocumentPerRoot(t *testing.T) {
	roots := loadRoots(t, manifests)
	type want struct {
		namespace, kind, name string
		absorbed              []string
		runtime               string
		digests               map[string]string
	}
	wants := []want{
		{"default", "DynamoGraphDeployment", "vllm-agg",
			[]string{"Deployment/vllm-agg-frontend", "Deployment/vllm-agg-vllmdecodeworker", "DynamoComponentDeployment/vllm-agg-frontend", "DynamoComponentDeployment/vllm-agg-vllmdecodeworker"},
			"vllm", map[string]string{
				"Frontend/main":         "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a7988",
				"VllmDecodeWorker/main": "8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d",
			}},
		{"default", "LeaderWorkerSet", "sglang-mn",
			[]string{"StatefulSet/sglang-mn", "StatefulSet/sglang-mn-0"},
			"sglang", map[string]string{
				"leader/sglang-leader": "2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a",
				"worker/sglang-worker": "2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a",
			}},
		{"default", "NIMService", "llama3-8b",
			[]string{"Deployment/llama3-8b"},
			"nim", map[string]string{
				"/llama3-8b-ctr": "5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
			}},
		{"eval", "CronJob", "nightly-eval",
			[]string{"Job/nightly-eval-29180280", "Job/nightly-eval-29181720"},
			"tgi", map[string]string{
				"/eval": "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
			}},
	}
	require.Len(t, roots, len(wants))
	for i, w := range wants {
		r := roots[i]
		t.Run(w.kind, func(t *testing.T) {
			require.NoError(t, r.Err())
			require.Equal(t, w.namespace, r.Object.GetNamespace())
			require.Equal(t, w.kind, r.Entry.Kind.Kind)
			require.Equal(t, w.name, r.Object.GetName())
			require.Equal(t, w.absorbed, r.Report.Status.Absorbed)
			require.Equal(t, w.runtime, r.Report.Status.Summary.Runtime)
			require.NoError(t, document.ValidateSchema([]byte(r.Document())))
			require.Equal(t, w.digests, docDigests(t, r.Document()))
			require.Equal(t, core.AIBOMName(schema.GroupKind{Group: r.Entry.Group, Kind: w.kind}, w.name), r.AIBOMName)
			require.Contains(t, r.Document(), `"value":"`+string(r.Object.GetUID())+`"`, "the subject's (synthetic) UID is in the document")
		})
	}
}

func TestSyntheticUIDsAreStable(t *testing.T) {
	a, b := loadRoots(t, manifests), loadRoots(t, manifests)
	for i := range a {
		require.Equal(t, a[i].Object.GetUID(), b[i].Object.GetUID())
		require.Equal(t, a[i].Document(), b[i].Document())
	}
}

func TestOutDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "boms")
	code, out, errOut := run(t, "scan", "-f", manifests, "--out-dir", dir)
	require.Equal(t, ExitOK, code, errOut)
	golden(t, "table.txt", out) // stdout still gets the table
	roots := loadRoots(t, manifests)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, len(roots))
	for _, r := range roots {
		got, err := os.ReadFile(filepath.Join(dir, r.AIBOMName+".cdx.json"))
		require.NoError(t, err)
		require.Equal(t, r.Document(), string(got))
	}
}

func TestJSONOneRootIsTheDocument(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", filepath.Join(manifests, "lws.yaml"), "-o", "json")
	require.Equal(t, ExitOK, code, errOut)
	roots := loadRoots(t, filepath.Join(manifests, "lws.yaml"))
	require.Len(t, roots, 1)
	require.Equal(t, roots[0].Document(), strings.TrimSuffix(out, "\n")+"\n")
	require.True(t, strings.HasPrefix(out, roots[0].Document()), "the document byte for byte")
	require.NoError(t, document.ValidateSchema([]byte(out)))
}

func TestJSONNoRootIsEmptyArray(t *testing.T) {
	f := writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	code, out, _ := run(t, "scan", "-f", f, "-o", "json")
	require.Equal(t, ExitOK, code)
	require.Equal(t, "[]\n", out)
}

// -o cyclonedx-xml prints one root's document as CycloneDX XML, and refuses
// several roots with a message that says what to do.
func TestXMLOutput(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", "../../examples/10-vllm-deployment.yaml", "-o", "cyclonedx-xml")
	require.Equal(t, ExitOK, code, errOut)
	require.True(t, strings.HasPrefix(out, `<?xml version="1.0" encoding="UTF-8"?>`), out)
	require.Contains(t, out, `<bom xmlns="http://cyclonedx.org/schema/bom/1.6"`)
	require.Contains(t, out, `<dependencies>`)

	code, out, errOut = run(t, "scan", "-f", "../../examples/", "-o", "cyclonedx-xml")
	require.Equal(t, ExitInput, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "prints one document")
}

// --out-dir never writes outside the directory, and a name too long for a
// file system is shortened with a hash: every root gets its file.
func TestOutDirHostileNames(t *testing.T) {
	long := strings.Repeat("a", 240)
	for name, want := range map[string]string{
		"x/../../../escaped": "",
		"..":                 "",
		long:                 "",
		"plain-name":         "plain-name",
	} {
		got := safeFileName(name)
		require.NotContains(t, got, "/")
		require.NotEqual(t, "..", got)
		require.NotEqual(t, ".", got)
		require.LessOrEqual(t, len(got), maxFileStem)
		if want != "" {
			require.Equal(t, want, got)
		}
	}
	require.NotEqual(t, safeFileName("a/b"), safeFileName("a_b"), "a changed name keeps a hash of the original")

	dir := t.TempDir()
	f := filepath.Join(t.TempDir(), "m.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: "x/../../../escaped"}
spec:
  template:
    spec: {containers: [{name: c, image: "vllm/vllm-openai:v0.6.3"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: "`+long+`"}
spec:
  template:
    spec: {containers: [{name: c, image: "vllm/vllm-openai:v0.6.3"}]}
`), 0o644))
	code, _, errOut := run(t, "scan", "-f", f, "--out-dir", dir, "-o", "json")
	require.Equal(t, ExitOK, code, errOut)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "both roots written, inside the directory")
	parent, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	for _, e := range parent {
		require.NotContains(t, e.Name(), "escaped")
	}
}

// Names and models from a manifest cannot forge table rows or drive the
// terminal: control characters and escape sequences are escaped.
func TestTableEscapesTerminalControls(t *testing.T) {
	require.Equal(t, "plain/name-1", Printable("plain/name-1"))
	require.Equal(t, `a\nb`, Printable("a\nb"))
	require.Equal(t, `\x1b[31mred`, Printable("\x1b[31mred"))
	require.Equal(t, `x\ty`, Printable("x\ty"))
	require.Equal(t, "модель", Printable("модель"))

	f := filepath.Join(t.TempDir(), "m.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: "web\ndefault  Deployment  forged\u001b[31m"}
spec:
  template:
    spec:
      containers:
      - name: c
        image: "vllm/vllm-openai:v0.6.3"
        args: ["--model", "org/m\u001b[2J"]
`), 0o644))
	code, out, errOut := run(t, "scan", "-f", f)
	require.Equal(t, ExitOK, code, errOut)
	require.NotContains(t, out, "\x1b")
	require.Equal(t, 2, strings.Count(out, "\n"), "a header and one row: %q", out)
}
