package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/internal/version"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

const manifests = "testdata/manifests"

func TestMain(m *testing.M) {
	// Documents name the tool's version: pin it.
	version.Version = "test"
	os.Exit(m.Run())
}

func registry(t *testing.T) *graph.Registry {
	t.Helper()
	adapters, err := intree.Select("all")
	require.NoError(t, err)
	reg, err := graph.NewRegistry(adapters...)
	require.NoError(t, err)
	return reg
}

// loadRoots evaluates manifests the way scan does.
func loadRoots(t *testing.T, paths ...string) []Root {
	t.Helper()
	reg := registry(t)
	snap, err := LoadFiles(reg, FileOptions{Paths: paths})
	require.NoError(t, err)
	roots, err := Evaluate(context.Background(), reg, graph.NewMemoryStore(snap.Objects),
		Options{Tool: document.Tool{Name: document.ToolName, Version: "test"}, MaxDocumentBytes: 512 * 1024})
	require.NoError(t, err)
	return roots
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
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
			[]string{"Deployment.apps/vllm-agg-frontend", "Deployment.apps/vllm-agg-vllmdecodeworker", "DynamoComponentDeployment.nvidia.com/vllm-agg-frontend", "DynamoComponentDeployment.nvidia.com/vllm-agg-vllmdecodeworker"},
			"vllm", map[string]string{
				"Frontend/main":         "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a7988",
				"VllmDecodeWorker/main": "8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d",
			}},
		{"default", "LeaderWorkerSet", "sglang-mn",
			[]string{"StatefulSet.apps/sglang-mn", "StatefulSet.apps/sglang-mn-0"},
			"sglang", map[string]string{
				"leader/sglang-leader": "2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a",
				"worker/sglang-worker": "2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a",
			}},
		{"default", "NIMService", "llama3-8b",
			[]string{"Deployment.apps/llama3-8b"},
			"nim", map[string]string{
				"/llama3-8b-ctr": "5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
			}},
		{"eval", "CronJob", "nightly-eval",
			[]string{"Job.batch/nightly-eval-29180280", "Job.batch/nightly-eval-29181720"},
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
			require.Equal(t, reconcile.AIBOMName(schema.GroupKind{Group: r.Entry.Group, Kind: w.kind}, w.name), r.AIBOMName)
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

const job = `apiVersion: batch/v1
kind: Job
metadata:
  generateName: eval-
spec:
  template:
    spec:
      containers:
      - {name: eval, image: "ghcr.io/huggingface/text-generation-inference:2.4.0", args: [--model-id, org/m]}
`

// An object with only metadata.generateName gets a name from its prefix
// and its content: the same input always gives the same name, another
// content another name, and two identical objects two names.
func TestGenerateNameGetsAStableSyntheticName(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, dir, "jobs.yaml", job+"---\n"+job+"---\n"+strings.Replace(job, "org/m", "org/other", 1))
	load := func() *Snapshot {
		snap, err := LoadFiles(registry(t), FileOptions{Paths: []string{f}})
		require.NoError(t, err)
		return snap
	}
	a, b := load(), load()
	var names []string
	for i, o := range a.Objects {
		require.Equal(t, o.GetName(), b.Objects[i].GetName(), "stable")
		require.Regexp(t, `^eval-[bcdfghjklmnpqrstvwxz2456789]{5}$`, o.GetName())
		names = append(names, o.GetName())
	}
	require.Len(t, names, 3)
	require.NotEqual(t, names[0], names[1], "identical objects get distinct names")
	require.NotEqual(t, names[0], names[2])
	require.Len(t, a.Notes, 3)
	require.Contains(t, a.Notes[0], f+`:1: Job has metadata.generateName "eval-" and no name: named `+names[0]+" offline")

	// Moving the object elsewhere in the input does not rename it.
	g := writeFile(t, dir, "moved.yaml", "# moved\n---\n"+job)
	snap, err := LoadFiles(registry(t), FileOptions{Paths: []string{g}})
	require.NoError(t, err)
	require.Equal(t, names[0], snap.Objects[0].GetName())
}

// Partial results: a file that cannot be read is named with its line and
// skipped whole; everything else is loaded.
func TestMalformedFileIsSkipped(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", job)
	bad := writeFile(t, dir, "b.yaml", job+"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [oops\n")
	noName := writeFile(t, dir, "c.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
	snap, err := LoadFiles(registry(t), FileOptions{Paths: []string{dir}})
	require.NoError(t, err)
	require.True(t, snap.Partial)
	require.Len(t, snap.Objects, 1, "only a.yaml's Job: b.yaml is skipped whole")
	require.Len(t, snap.Errors, 2)
	require.Regexp(t, `^`+bad+`:14: .*yaml: line 14: .*; file skipped$`, snap.Errors[0])
	require.Equal(t, noName+":1: ConfigMap without metadata.name or metadata.generateName; file skipped", snap.Errors[1])
}

// The same object in two files: the later one is kept with a warning, or,
// with Strict, an error naming both. Twice in one file: an error unless
// AllowDuplicates.
func TestDuplicates(t *testing.T) {
	dir := t.TempDir()
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {v: " + v + "}\n"
	}
	a := writeFile(t, dir, "a/1.yaml", cm("first"))
	b := writeFile(t, dir, "b/2.yaml", "# again\n"+cm("second"))
	same := writeFile(t, dir, "c/3.yaml", cm("one")+"---\n"+cm("two"))

	snap, err := LoadFiles(registry(t), FileOptions{Paths: []string{a, b}})
	require.NoError(t, err)
	require.Equal(t, []string{"duplicate ConfigMap default/x at " + a + ":1 and " + b + ":2: the last one read is kept"}, snap.Warnings)
	require.Len(t, snap.Objects, 1)
	require.Equal(t, "second", snap.Objects[0].(*unstructured.Unstructured).Object["data"].(map[string]any)["v"])

	_, err = LoadFiles(registry(t), FileOptions{Paths: []string{a, b}, Strict: true})
	var dup *DuplicateError
	require.True(t, errors.As(err, &dup))
	require.Equal(t, "duplicate objects:\n  ConfigMap default/x at "+a+":1 and "+b+":2 (--strict)", err.Error())

	_, err = LoadFiles(registry(t), FileOptions{Paths: []string{same}})
	require.True(t, errors.As(err, &dup))
	require.Contains(t, err.Error(), "ConfigMap default/x at "+same+":1 and "+same+":6 (twice in one file; --allow-duplicates keeps the last)")

	snap, err = LoadFiles(registry(t), FileOptions{Paths: []string{same}, AllowDuplicates: true})
	require.NoError(t, err)
	require.Len(t, snap.Warnings, 1)
}

// Every output format carries the same documents.
func TestOutputFormats(t *testing.T) {
	roots := loadRoots(t, manifests)
	one := loadRoots(t, filepath.Join(manifests, "lws.yaml"))
	require.Len(t, one, 1)

	for _, tc := range []struct {
		name  string
		roots []Root
		want  int
	}{{"several", roots, 4}, {"one", one, 1}, {"none", nil, 0}} {
		t.Run("json "+tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, WriteJSON(&out, tc.roots))
			var docs []json.RawMessage
			require.NoError(t, json.Unmarshal(out.Bytes(), &docs), "always an array")
			require.Len(t, docs, tc.want)

			var y bytes.Buffer
			require.NoError(t, WriteYAML(&y, tc.roots))
			j, err := yaml.YAMLToJSON(y.Bytes())
			require.NoError(t, err)
			var fromYAML []json.RawMessage
			require.NoError(t, json.Unmarshal(j, &fromYAML))
			require.Len(t, fromYAML, tc.want)
			for i := range docs {
				require.JSONEq(t, string(docs[i]), string(fromYAML[i]))
			}
		})
	}

	var out bytes.Buffer
	require.NoError(t, WriteCycloneDX(&out, one, false))
	require.True(t, out.String() == one[0].Document(), "the document byte for byte")
	require.True(t, strings.HasSuffix(out.String(), "}\n"))
	out.Reset()
	require.NoError(t, WriteCycloneDX(&out, one, true))
	require.True(t, strings.HasPrefix(out.String(), `<?xml version="1.0" encoding="UTF-8"?>`))

	for _, xml := range []bool{false, true} {
		out.Reset()
		err := WriteCycloneDX(&out, roots, xml)
		require.ErrorIs(t, err, ErrNotOneDocument)
		require.ErrorContains(t, err, "there are 4 roots with a document: use --out-dir DIR")
		require.Empty(t, out.String())
	}
}

// --out-dir never writes outside the directory, and a name too long for a
// file system is shortened with a hash: every root gets its file.
func TestSafeFileName(t *testing.T) {
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
}

func TestPrintable(t *testing.T) {
	require.Equal(t, "plain/name-1", Printable("plain/name-1"))
	require.Equal(t, `a\nb`, Printable("a\nb"))
	require.Equal(t, `\x1b[31mred`, Printable("\x1b[31mred"))
	require.Equal(t, `x\ty`, Printable("x\ty"))
	require.Equal(t, "модель", Printable("модель"))
}
