package profile

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
)

// A profile with a name pattern, an init container, a framework and a
// flag-aware model read reports a realistic operator's pods exactly as they
// run: every container of the pods, init containers marked, no other; the
// model from the worker's --source, never the sidecar's --model.
func TestProfileReportsAcmePodsAsTheyRun(t *testing.T) {
	a, err := Load("testdata/acme/profile.yaml")
	require.NoError(t, err)
	obj := &unstructured.Unstructured{}
	data, err := os.ReadFile("testdata/acme/modelserver.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &obj.Object))
	f, err := a[0].Scrape(context.Background(), obj)
	require.NoError(t, err)

	type ctr struct {
		name string
		init bool
	}
	var reported []ctr
	for _, c := range f.Containers {
		require.NoError(t, c.Validate())
		reported = append(reported, ctr{c.Name, c.Init})
	}
	var running []ctr
	for _, file := range []string{"pod-prefill.yaml", "pod-decode.yaml"} {
		data, err := os.ReadFile("testdata/acme/" + file)
		require.NoError(t, err)
		var pod corev1.Pod
		require.NoError(t, yaml.Unmarshal(data, &pod))
		for _, c := range pod.Spec.InitContainers {
			running = append(running, ctr{c.Name, true})
		}
		for _, c := range pod.Spec.Containers {
			running = append(running, ctr{c.Name, false})
		}
	}
	key := func(c ctr) string { return c.name }
	sortUnique := func(l []ctr) []ctr {
		slices.SortFunc(l, func(x, y ctr) int { return strings.Compare(key(x), key(y)) })
		return slices.Compact(l)
	}
	require.Equal(t, sortUnique(running), sortUnique(reported))

	// One claim per role, each located at its flag's value.
	var models []string
	for _, m := range f.Models {
		models = append(models, m.Name+"@"+m.Evidence.Locator)
	}
	require.Equal(t, []string{"Qwen/Qwen3-8B@spec.roles[0].args[3]", "Qwen/Qwen3-8B@spec.roles[1].args[0]"}, models)
	require.Equal(t, []adapter.Framework{{Name: "lm-eval", Purpose: adapter.PurposeEvaluation, Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.evaluation.harness"}}}, f.Frameworks)
	require.Equal(t, "vllm", f.Runtimes[0].Name)
}

func TestFlagValues(t *testing.T) {
	p, err := parsePath("args")
	require.NoError(t, err)
	for _, tc := range []struct {
		args any
		want []string
	}{
		{[]any{"--source", "a"}, []string{"a@args[1]"}},
		{[]any{"--source=b", "--x", "y"}, []string{"b@args[0]"}},
		{[]any{"--source"}, nil},
		{[]any{"--source", "--other"}, nil},
		{[]any{"--sourcex", "c", "--source-dir", "d"}, nil},
		{"serve --source e --port 1", []string{"e@args"}},
	} {
		vs, err := flagValues(p, node{value: map[string]any{"args": tc.args}}, []string{"--source"})
		require.NoError(t, err)
		var got []string
		for _, v := range vs {
			got = append(got, v.s+"@"+v.locator)
		}
		require.Equal(t, tc.want, got, "%v", tc.args)
	}
}

// Anything that would give an empty or ambiguous container name is refused
// at load, with the rule's path.
func TestContainerNamesAreRefusedAtLoad(t *testing.T) {
	kind := func(rules v1alpha1.ProfileRules) v1alpha1.AdapterProfileSpec {
		return v1alpha1.AdapterProfileSpec{Version: "1", Kinds: []v1alpha1.ProfileKind{{Group: "x.io", Kind: "X", Resource: "xs",
			Versions: []string{"v1"}, Role: "tracked", Rules: &rules}}}
	}
	c := func(name, pattern string) v1alpha1.ProfileRules {
		return v1alpha1.ProfileRules{Containers: []v1alpha1.ContainerRule{{Selection: v1alpha1.Selection{Path: "spec"}, Name: name, NamePattern: pattern}}}
	}
	for _, tc := range []struct {
		rules v1alpha1.ProfileRules
		err   string
	}{
		{c("", ""), "spec.kinds[0].rules.containers[0]: name or namePattern is required"},
		{c("a", "{b}"), "exclusive"},
		{c("Bad_Name", ""), "spec.kinds[0].rules.containers[0].name"},
		{c("", "{roles[*].name}-x"), "wildcard"},
		{c("", "{a}{b}"), "ambiguous"},
		{c("", "{a"), "without '}'"},
		{c("", "x-{}"), "not a field path"},
		{c("", "{a}_x"), "not part of a container name"},
		{c("", "{a}-{b}-{c}-{d}-{e}"), "more than 4"},
		{v1alpha1.ProfileRules{Containers: []v1alpha1.ContainerRule{
			{Selection: v1alpha1.Selection{Path: "spec"}, Name: "a"}, {Selection: v1alpha1.Selection{Path: "spec.b"}, Name: "a"}}},
			"spec.kinds[0].rules.containers[1]: container \"a\""},
		{v1alpha1.ProfileRules{PodTemplates: []v1alpha1.TemplateRule{{Selection: v1alpha1.Selection{Path: "spec.runner"}, Shape: "container"}}},
			"spec.kinds[0].rules.podTemplates[0]: shape container needs a name"},
		{v1alpha1.ProfileRules{Models: []v1alpha1.FieldRule{{Selection: v1alpha1.Selection{Path: "spec"}, Field: "args", Flags: []string{"source"}}}},
			"spec.kinds[0].rules.models[0].flags[0]"},
		{v1alpha1.ProfileRules{Frameworks: []v1alpha1.FieldRule{{Selection: v1alpha1.Selection{Path: "spec"}, Field: "h"}}},
			"spec.kinds[0].rules.frameworks[0].purpose"},
	} {
		_, err := Compile(kind(tc.rules), "x", "test")
		require.ErrorContains(t, err, tc.err)
	}
	// Accepted: a containers list's elements are always named.
	_, err := Compile(kind(v1alpha1.ProfileRules{PodTemplates: []v1alpha1.TemplateRule{
		{Selection: v1alpha1.Selection{Path: "spec.containers[*]"}, Shape: "container"},
		{Selection: v1alpha1.Selection{Path: "spec.runner"}, Shape: "container", Name: "runner"}}}), "x", "test")
	require.NoError(t, err)
}

// A shape container node without a name takes the rule's name; it is never
// reported with an empty one.
func TestShapeContainerWithoutNameTakesTheRulesName(t *testing.T) {
	a, err := Compile(v1alpha1.AdapterProfileSpec{Version: "1", Kinds: []v1alpha1.ProfileKind{{Group: "x.io", Kind: "X", Resource: "xs",
		Versions: []string{"v1"}, Role: "tracked", Rules: &v1alpha1.ProfileRules{PodTemplates: []v1alpha1.TemplateRule{
			{Selection: v1alpha1.Selection{Path: "spec.runner"}, Shape: "container", Name: "runner"}}}}}}, "x", "test")
	require.NoError(t, err)
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.io/v1", "kind": "X", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"runner": map[string]any{"image": "vllm/vllm-openai:v0.8.5"}}}}
	f, err := a.Scrape(context.Background(), obj)
	require.NoError(t, err)
	require.Len(t, f.Containers, 1)
	require.Equal(t, "runner", f.Containers[0].Name)
}
