package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

// TestGoldenGraphPerAdapter shows the dependency graph of one realistic
// workload per operator adapter, with components named instead of their
// bom-refs: what an auditor reads from "dependencies". Every ref resolves
// and the document is schema-valid.
func TestGoldenGraphPerAdapter(t *testing.T) {
	adapters := filepath.Join("..", "..", "adapters")
	for _, tc := range []struct{ name, files string }{
		{"dynamo", filepath.Join(adapters, "dynamo", "testdata", "vllm-disagg-v1beta1.yaml")},
		{"nim", filepath.Join(adapters, "nim", "testdata", "nimservice-llama.yaml")},
		{"lws", filepath.Join(adapters, "lws", "testdata", "leaderworkerset-leader-worker.yaml")},
		{"kserve", filepath.Join(adapters, "kserve", "testdata", "isvc-vllm-raw.yaml") + "," +
			filepath.Join(adapters, "kserve", "testdata", "references", "servingruntime-vllm.yaml")},
		{"kaito", filepath.Join(adapters, "profiles", "testdata", "kaito", "workspace-template.yaml")},
		// A LoRA adapter depends on its base model.
		{"aibrix-lora", filepath.Join(adapters, "profiles", "testdata", "aibrix", "modeladapter.yaml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"scan", "-o", "cyclonedx-json", "--unused-references=false"}
			for _, f := range strings.Split(tc.files, ",") {
				args = append(args, "-f", f)
			}
			code, out, errOut := run(t, args...)
			require.Equal(t, ExitOK, code, errOut)
			require.NoError(t, document.ValidateSchema([]byte(out)))
			golden(t, "graph-"+tc.name+".txt", renderGraph(t, out))
		})
	}
}

// renderGraph prints "dependencies" with every bom-ref replaced by the
// component's type and name (and version), one edge per line, sorted.
func renderGraph(t *testing.T, doc string) string {
	t.Helper()
	var bom struct {
		Metadata struct {
			Component struct {
				BOMRef string `json:"bom-ref"`
				Name   string `json:"name"`
			} `json:"component"`
		} `json:"metadata"`
		Components []struct {
			BOMRef  string `json:"bom-ref"`
			Type    string `json:"type"`
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"components"`
		Dependencies []struct {
			Ref       string   `json:"ref"`
			DependsOn []string `json:"dependsOn"`
		} `json:"dependencies"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &bom))
	names := map[string]string{bom.Metadata.Component.BOMRef: "workload " + bom.Metadata.Component.Name}
	for _, c := range bom.Components {
		n := c.Type + " " + c.Name
		if c.Version != "" {
			n += ":" + c.Version
		}
		names[c.BOMRef] = n
	}
	var lines []string
	for _, d := range bom.Dependencies {
		from, ok := names[d.Ref]
		require.True(t, ok, "dependency ref %q names no component", d.Ref)
		if len(d.DependsOn) == 0 {
			lines = append(lines, from)
		}
		for _, on := range d.DependsOn {
			to, ok := names[on]
			require.True(t, ok, "dependsOn %q names no component", on)
			lines = append(lines, fmt.Sprintf("%s -> %s", from, to))
		}
	}
	require.NotEmpty(t, lines, "a document without a graph")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
