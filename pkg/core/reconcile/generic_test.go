package reconcile

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func podWith(name, generateName, image string) *unstructured.Unstructured {
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": image}}},
	}}
	if generateName != "" {
		p.SetGenerateName(generateName)
	}
	return p
}

func podLabels(pods []podToRead) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.label
	}
	return out
}

// The pods read below a generic root, and the names their locators carry,
// do not depend on the order pods are listed in nor on which replica of a
// generateName runs now: a rolling restart does not rewrite the document.
func TestPodsToReadAreStableAcrossListOrderAndReplacement(t *testing.T) {
	a0, a1 := podWith("eval-x7k2q", "eval-", "lm-eval:1"), podWith("eval-p9d4m", "eval-", "lm-eval:1")
	w0, w1 := podWith("worker-1", "", "vllm:1"), podWith("worker-0", "", "vllm:1")
	bare := podWith("notebook", "", "sglang:1")
	noSpec := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "meta-only"}}}

	want := []string{"eval-*", "notebook", "worker-0"}
	for _, order := range [][]*unstructured.Unstructured{
		{a0, a1, w0, w1, bare, noSpec},
		{noSpec, bare, w1, w0, a1, a0},
		{w0, bare, a1, noSpec, a0, w1},
	} {
		pods, omitted := podsToRead(order)
		require.Zero(t, omitted)
		require.Equal(t, want, podLabels(pods))
		require.Equal(t, "worker-0", pods[2].pod.GetName(), "the smallest name among replicas of one spec")
	}
	// Replicas of one generateName share the label: the smallest name is
	// read, whichever is listed first (they may differ in arguments).
	for _, order := range [][]*unstructured.Unstructured{{a0, a1}, {a1, a0}} {
		pods, _ := podsToRead(order)
		require.Equal(t, "eval-p9d4m", pods[0].pod.GetName())
	}
	// A replacement replica of the generateName keeps the label.
	pods, _ := podsToRead([]*unstructured.Unstructured{podWith("eval-zz9qq", "eval-", "lm-eval:1"), w1, bare})
	require.Equal(t, want, podLabels(pods))
}

// Whoever creates pods under an owner cannot make its reconcile read
// without end: past MaxPodSpecsRead distinct specs, the rest are counted.
func TestPodsToReadAreBounded(t *testing.T) {
	var all []*unstructured.Unstructured
	for i := range MaxPodSpecsRead + 5 {
		all = append(all, podWith(fmt.Sprintf("p-%03d", i), "", fmt.Sprintf("img:%d", i)))
	}
	slices.Reverse(all)
	pods, omitted := podsToRead(all)
	require.Len(t, pods, MaxPodSpecsRead)
	require.Equal(t, 5, omitted)
	require.Equal(t, "p-000", pods[0].label)
}
