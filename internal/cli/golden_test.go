package cli

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

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/internal/scan"
	"github.com/aibom-dev/aibom/internal/version"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// manifests are internal/scan's golden manifests (the envtest suite applies
// them to a cluster too).
const manifests = "../scan/testdata/manifests"

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
	code := RunStreams(context.Background(), args, Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	return code, stdout.String(), stderr.String()
}

// runStdin is run with standard input.
func runStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := RunStreams(context.Background(), args, Streams{In: strings.NewReader(stdin), Out: &stdout, Err: &stderr})
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
	require.NoError(t, err, "run go test ./internal/cli -update to create it")
	require.Equal(t, string(want), got, "output differs from %s (go test ./internal/cli -update rewrites it)", path)
}

func TestGoldenTable(t *testing.T) {
	code, out, errOut := run(t, "scan", "-f", manifests)
	require.Equal(t, ExitOK, code, errOut)
	golden(t, "table.txt", out)
	// The NIMCache is a referenced kind: known, and read by its NIMService.
	require.Equal(t, "note: 1 object(s) of kinds no enabled adapter knows were kept (they can own workloads; one that shows an AI signal in its spec is read generically): Service (1)\n", errOut)
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
func loadRoots(t *testing.T, paths ...string) []scan.Root {
	t.Helper()
	adapters, err := intree.Select("all")
	require.NoError(t, err)
	reg, err := graph.NewRegistry(adapters...)
	require.NoError(t, err)
	snap, err := scan.LoadFiles(reg, scan.FileOptions{Paths: paths})
	require.NoError(t, err)
	roots, err := scan.Evaluate(context.Background(), reg, graph.NewMemoryStore(snap.Objects),
		scan.Options{Tool: document.Tool{Name: document.ToolName, Version: "test"}, MaxDocumentBytes: DefaultMaxDocumentBytes})
	require.NoError(t, err)
	return roots
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

// -o json is an array for one root too (a breaking change: it used to be
// the document itself); -o cyclonedx-json is the one BOM, byte for byte.
func TestOneRootJSONAndCycloneDX(t *testing.T) {
	roots := loadRoots(t, filepath.Join(manifests, "lws.yaml"))
	require.Len(t, roots, 1)

	code, out, errOut := run(t, "scan", "-f", filepath.Join(manifests, "lws.yaml"), "-o", "json")
	require.Equal(t, ExitOK, code, errOut)
	var docs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &docs))
	require.Len(t, docs, 1)
	require.JSONEq(t, roots[0].Document(), string(docs[0]))

	code, out, errOut = run(t, "scan", "-f", filepath.Join(manifests, "lws.yaml"), "-o", "cyclonedx-json")
	require.Equal(t, ExitOK, code, errOut)
	require.True(t, out == roots[0].Document(), "the document byte for byte")
	require.NoError(t, document.ValidateSchema([]byte(out)))

	// Several roots: one BOM cannot hold them; the error says what to do.
	code, out, errOut = run(t, "scan", "-f", manifests, "-o", "cyclonedx-json")
	require.Equal(t, ExitInput, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "aibom scan: -o cyclonedx-json prints one BOM and there are 4 roots with a document: use --out-dir DIR")
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
	require.Contains(t, errOut, "-o cyclonedx-xml prints one BOM")
}

// --out-dir never writes outside the directory, and a name too long for a
// file system is shortened with a hash: every root gets its file.
func TestOutDirHostileNames(t *testing.T) {
	long := strings.Repeat("a", 240)
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
