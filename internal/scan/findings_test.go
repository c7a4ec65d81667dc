package scan

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

func TestParseConditions(t *testing.T) {
	got, err := ParseConditions([]string{"no-ai-signal", " image-unpinned", "no-ai-signal"})
	require.NoError(t, err)
	require.Equal(t, []Condition{ImageUnpinned, NoAISignal}, got, "in the order of Conditions, once each")
	got, err = ParseConditions([]string{"all", "model-unresolved"})
	require.NoError(t, err)
	require.Equal(t, Conditions, got)
	_, err = ParseConditions([]string{"images"})
	require.ErrorContains(t, err, `unknown condition "images" (known: model-unresolved, runtime-unresolved, image-unpinned, no-ai-signal, all)`)
}

// rootWith is a root whose document has the given components.
func rootWith(name, components string) Root {
	o := &unstructured.Unstructured{}
	o.SetName(name)
	return Root{Object: o, Report: reconcile.Report{Status: v1alpha1.AIBOMStatus{Document: `{"components": [` + components + `]}`}}}
}

func TestCheck(t *testing.T) {
	declared := `"properties": [{"name": "aibom.confidence", "value": "declared"}]`
	unresolved := `"properties": [{"name": "aibom.confidence", "value": "unresolved"}]`
	ok := rootWith("ok", `{"type": "application", "name": "vllm", `+declared+`},
		{"type": "machine-learning-model", "name": "org/m", `+declared+`},
		{"type": "container", "name": "docker.io/vllm/vllm-openai", "version": "v0.6.3", "properties": [{"name": "aibom.image.pinned", "value": "true"}]}`)
	platform := rootWith("nim", `{"type": "platform", "name": "nim", `+declared+`}, {"type": "machine-learning-model", "name": "meta/llama", `+declared+`}`)
	refMissing := rootWith("ref", `{"type": "application", "name": "vllm", `+declared+`},
		{"type": "machine-learning-model", "name": "org/m", `+declared+`},
		{"type": "machine-learning-model", "name": "storage-uri-of/missing-runtime", `+unresolved+`}`)
	// Two references to nginx, one pinned and one not: the component is
	// not aibom.image.pinned.
	unpinned := rootWith("tag", `{"type": "container", "name": "docker.io/library/nginx", "version": "1.27", "properties": []},
		{"type": "container", "name": "docker.io/library/busybox", "properties": [{"name": "aibom.image.fromPods", "value": "true"}]}`)
	noSignal := rootWith("web", ``)
	noSignal.Report.Unmatched = true
	noDocument := Root{Object: &unstructured.Unstructured{}}

	find := func(roots ...Root) map[string][]string {
		out := map[string][]string{}
		for _, f := range Check(roots, Conditions) {
			out[f.Root.Object.GetName()] = append(out[f.Root.Object.GetName()], string(f.Condition)+": "+f.Detail)
		}
		return out
	}
	require.Empty(t, find(ok, platform, noDocument), "a platform is a runtime; a root without a document has no findings")
	require.Equal(t, map[string][]string{
		"ref": {"model-unresolved: model storage-uri-of/missing-runtime is unresolved"},
		"tag": {
			"model-unresolved: no model found",
			"runtime-unresolved: no runtime found",
			"image-unpinned: image docker.io/library/nginx:1.27 is not pinned by digest",
			"image-unpinned: image docker.io/library/busybox is not written in the spec (read from the pods)",
		},
		"web": {"no-ai-signal: no runtime, model, model storage, framework or accelerator found"},
	}, find(refMissing, unpinned, noSignal))
	// Only the conditions asked for.
	require.Len(t, Check([]Root{unpinned, noSignal}, []Condition{NoAISignal}), 1)
}
