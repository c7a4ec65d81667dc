package bomdiff

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// doc is a minimal AIBOM document of Deployment default/<name>.
func doc(name string, components ...string) string {
	return `{"bomFormat":"CycloneDX","specVersion":"1.6","metadata":{"component":{"bom-ref":"aibom:workload:Deployment.apps/default/` + name + `","name":"` + name + `",
"properties":[{"name":"aibom.workload.kind","value":"Deployment"},{"name":"aibom.workload.group","value":"apps"},{"name":"aibom.workload.namespace","value":"default"},{"name":"aibom.workload.name","value":"` + name + `"}]}},
"components":[` + strings.Join(components, ",") + `]}`
}

func model(name, version string) string {
	return `{"type":"machine-learning-model","name":"` + name + `","version":"` + version + `"}`
}

func runtime(name, version string) string {
	return `{"type":"application","name":"` + name + `","version":"` + version + `"}`
}

// container is a container component; digest "" is unresolved, running
// adds running digests.
func container(repo, tag, digest string, running ...string) string {
	c := `{"type":"container","name":"` + repo + `","version":"` + tag + `"`
	if digest != "" {
		c += `,"hashes":[{"alg":"SHA-256","content":"` + digest + `"}]`
	}
	var props []string
	for i, r := range running {
		props = append(props, `{"name":"aibom.digest.running.`+string(rune('0'+i))+`","value":"`+r+`"},{"name":"aibom.digest.running.`+string(rune('0'+i))+`.pods","value":"1"}`)
	}
	if len(props) > 0 {
		c += `,"properties":[` + strings.Join(props, ",") + `]`
	}
	return c + "}"
}

const (
	d1 = "1111111111111111111111111111111111111111111111111111111111111111"
	d2 = "2222222222222222222222222222222222222222222222222222222222222222"
)

func parse(t *testing.T, docs ...string) []Workload {
	t.Helper()
	ws, err := Parse("test", []byte("["+strings.Join(docs, ",")+"]"))
	require.NoError(t, err)
	return ws
}

func TestDiff(t *testing.T) {
	web := doc("web", runtime("vllm", "v0.6.3"), model("org/m", ""), container("docker.io/vllm/vllm-openai", "v0.6.3", d1))
	for _, tc := range []struct {
		name   string
		before []string
		after  []string
		want   []WorkloadDiff
	}{
		{"same", []string{web}, []string{web}, []WorkloadDiff{}},
		{"digest change", []string{web},
			[]string{doc("web", runtime("vllm", "v0.6.3"), model("org/m", ""), container("docker.io/vllm/vllm-openai", "v0.6.3", d2))},
			[]WorkloadDiff{{Workload: "Deployment.apps default/web", Kind: "Deployment", Group: "apps", Namespace: "default", Name: "web", Status: Changed,
				Digests: []Change{{Name: "docker.io/vllm/vllm-openai:v0.6.3", Status: Changed, From: "sha256:" + d1, To: "sha256:" + d2}}}}},
		{"digest resolved, and a second one running", []string{doc("web", container("docker.io/vllm/vllm-openai", "v0.6.3", ""))},
			[]string{doc("web", container("docker.io/vllm/vllm-openai", "v0.6.3", d1, "sha256:"+d1, "sha256:"+d2))},
			[]WorkloadDiff{{Workload: "Deployment.apps default/web", Kind: "Deployment", Group: "apps", Namespace: "default", Name: "web", Status: Changed,
				Digests: []Change{{Name: "docker.io/vllm/vllm-openai:v0.6.3", Status: Changed, From: "unresolved", To: "sha256:" + d1 + ", sha256:" + d2}}}}},
		{"model, runtime and image changed", []string{web},
			[]string{doc("web", runtime("sglang", "v0.4.9"), model("org/m", "v2"), model("org/draft", ""), container("docker.io/vllm/vllm-openai", "v0.7.0", d1))},
			[]WorkloadDiff{{Workload: "Deployment.apps default/web", Kind: "Deployment", Group: "apps", Namespace: "default", Name: "web", Status: Changed,
				Models:   []Change{{Name: "org/draft", Status: Added}, {Name: "org/m", Status: Changed, To: "v2"}},
				Runtimes: []Change{{Name: "sglang", Status: Added, To: "v0.4.9"}, {Name: "vllm", Status: Removed, From: "v0.6.3"}},
				Images:   []Change{{Name: "docker.io/vllm/vllm-openai", Status: Changed, From: "v0.6.3", To: "v0.7.0"}},
				Digests: []Change{{Name: "docker.io/vllm/vllm-openai:v0.6.3", Status: Removed, From: "sha256:" + d1},
					{Name: "docker.io/vllm/vllm-openai:v0.7.0", Status: Added, To: "sha256:" + d1}}}}},
		{"workload added and removed", []string{web}, []string{doc("chat", model("org/c", ""))},
			[]WorkloadDiff{
				{Workload: "Deployment.apps default/chat", Kind: "Deployment", Group: "apps", Namespace: "default", Name: "chat", Status: Added,
					Models: []Change{{Name: "org/c", Status: Added}}},
				{Workload: "Deployment.apps default/web", Kind: "Deployment", Group: "apps", Namespace: "default", Name: "web", Status: Removed,
					Models:   []Change{{Name: "org/m", Status: Removed}},
					Runtimes: []Change{{Name: "vllm", Status: Removed, From: "v0.6.3"}},
					Images:   []Change{{Name: "docker.io/vllm/vllm-openai", Status: Removed, From: "v0.6.3"}},
					Digests:  []Change{{Name: "docker.io/vllm/vllm-openai:v0.6.3", Status: Removed, From: "sha256:" + d1}}},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Diff(parse(t, tc.before...), parse(t, tc.after...))
			require.Equal(t, tc.want, res.Workloads)
			require.Equal(t, len(tc.want) > 0, res.Different)
		})
	}
}

func TestWriteTextAndJSON(t *testing.T) {
	res := Diff(parse(t, doc("web", container("docker.io/vllm/vllm-openai", "v0.6.3", d1)), doc("gone")),
		parse(t, doc("web", container("docker.io/vllm/vllm-openai", "v0.6.3", d2)), doc(`new\u001b[2J`, model("org/m", "v1"))))
	var text bytes.Buffer
	require.NoError(t, WriteText(&text, res))
	require.Equal(t, `- Deployment.apps default/gone
+ Deployment.apps default/new\x1b[2J
  + model org/m (v1)
~ Deployment.apps default/web
  ~ digest docker.io/vllm/vllm-openai:v0.6.3: sha256:`+d1+` -> sha256:`+d2+`
`, text.String(), "values escaped")

	var j bytes.Buffer
	require.NoError(t, WriteJSON(&j, res))
	var back Result
	require.NoError(t, json.Unmarshal(j.Bytes(), &back))
	require.Equal(t, res, back)
	require.True(t, strings.HasPrefix(j.String(), "{\n  \"different\": true,\n  \"workloads\": [\n"))
}

// Load reads a document, an array, YAML, a folder of them; it refuses
// what is not a CycloneDX document, and a workload described twice.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	write("boms/a.cdx.json", doc("a"))
	write("boms/b.cdx.json", "["+doc("b")+","+doc("c")+"]")
	write("boms/notes.txt", "ignored")
	ws, err := Load(filepath.Join(dir, "boms"), nil)
	require.NoError(t, err)
	require.Len(t, ws, 3)
	require.Equal(t, filepath.Join(dir, "boms", "b.cdx.json")+"[1]", ws[2].Source)

	y := write("one.yaml", "bomFormat: CycloneDX\nmetadata:\n  component:\n    bom-ref: aibom:workload:Deployment.apps/default/ydoc\n    name: ydoc\n")
	ws, err = Load(y, nil)
	require.NoError(t, err)
	require.Equal(t, "aibom:workload:Deployment.apps/default/ydoc", ws[0].Ref)

	ws, err = Load("-", strings.NewReader(doc("in")))
	require.NoError(t, err)
	require.Equal(t, "<stdin>", ws[0].Source)

	_, err = Load(write("other.json", `{"kind": "Deployment"}`), nil)
	require.ErrorContains(t, err, "other.json: not a CycloneDX document")

	write("dup/a.json", doc("a"))
	write("dup/b.json", doc("a"))
	_, err = Load(filepath.Join(dir, "dup"), nil)
	require.ErrorContains(t, err, "Deployment.apps default/a is described twice, in "+filepath.Join(dir, "dup", "a.json")+" and in "+filepath.Join(dir, "dup", "b.json"))

	_, err = Load(filepath.Join(dir, "missing"), nil)
	require.Error(t, err)
}
