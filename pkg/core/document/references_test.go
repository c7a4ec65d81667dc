package document

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// References are listed sorted and without repeats, with their state; a
// token written where a name belongs is masked.
func TestReferenceProperties(t *testing.T) {
	props := referenceProperties([]Reference{
		{Group: "serving.kserve.io", Kind: "ServingRuntime", Namespace: "a", Name: "vllm", Locator: "spec.predictor.model.runtime", Unresolved: "not-found"},
		{Group: "apps.nvidia.com", Kind: "NIMCache", Namespace: "a", Name: "llama", Locator: "spec.storage.nimCache.name"},
		{Group: "apps.nvidia.com", Kind: "NIMCache", Namespace: "a", Name: "llama", Locator: "spec.storage.nimCache.name"},
		{Group: "serving.kserve.io", Kind: "ServingRuntime", Namespace: "a", Name: "hf_abcdefghijklmnopqrstuvwxyz0123456789", Locator: "spec.x"},
	})
	var got []string
	for _, p := range props {
		got = append(got, p.Name+"="+p.Value)
	}
	require.Equal(t, []string{
		"aibom.reference.0=NIMCache/llama",
		"aibom.reference.0.locator=spec.storage.nimCache.name",
		"aibom.reference.0.state=resolved",
		"aibom.reference.1.locator=spec.x",
		"aibom.reference.1.state=resolved",
		"aibom.reference.2=ServingRuntime/vllm",
		"aibom.reference.2.locator=spec.predictor.model.runtime",
		"aibom.reference.2.state=unresolved:not-found",
	}, slicesWithout(got, "aibom.reference.1="))
	for _, g := range got {
		require.NotContains(t, g, "hf_abcdefghijklmnopqrstuvwxyz0123456789")
	}
}

func slicesWithout(list []string, prefix string) []string {
	var out []string
	for _, s := range list {
		if !strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}
