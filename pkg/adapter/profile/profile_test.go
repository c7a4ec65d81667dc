package profile

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		n       int
	}{
		{in: "spec.template", n: 2},
		{in: ".spec.roles[*].template", n: 4},
		{in: "spec.mpiReplicaSpecs.*.template", n: 4},
		{in: "metadata.annotations[kaito.sh/runtime]", n: 3},
		{in: "spec.containers[0].image", n: 4},
		{in: "", n: 0},
		{in: "spec..x", err: "empty field name"},
		{in: "spec.x[", err: "unterminated"},
		{in: "spec.x]", err: "bad field name"},
		{in: "spec.x[1a]", err: "not a non-negative number"},
		{in: "spec.x[]", err: "empty []"},
		{in: strings.Repeat("a.", MaxPathSegments) + "a", err: "segments"},
	} {
		p, err := parsePath(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parsePath(%q) = %v, want error containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(p) != tc.n {
			t.Errorf("parsePath(%q) = %d segments, %v; want %d", tc.in, len(p), err, tc.n)
		}
	}
}

func TestEvalLocatorsAndWildcards(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{
		"roles": []any{map[string]any{"name": "prefill", "x": "a"}, map[string]any{"x": "b"}},
		"reps":  map[string]any{"Worker": map[string]any{"x": "w"}, "Launcher": map[string]any{"x": "l"}},
		"ann":   map[string]any{"kaito.sh/runtime": "vllm"},
	}}
	for _, tc := range []struct {
		path string
		want []string // locator=wildcard=value
	}{
		{"spec.roles[*].x", []string{"spec.roles[0].x=prefill=a", "spec.roles[1].x=1=b"}},
		{"spec.reps.*.x", []string{"spec.reps.Launcher.x=Launcher=l", "spec.reps.Worker.x=Worker=w"}},
		{"spec.ann[kaito.sh/runtime]", []string{"spec.ann[kaito.sh/runtime]==vllm"}},
		{"spec.roles[5].x", nil},
		{"spec.absent.x", nil},
	} {
		p, err := parsePath(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := p.eval(node{value: obj})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		var got []string
		for _, n := range nodes {
			got = append(got, n.locator+"="+n.wildcard+"="+n.value.(string))
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
		}
	}
	// A value of the wrong type on the way is an error naming its locator.
	p, _ := parsePath("spec.roles.x")
	if _, err := p.eval(node{value: obj}); err == nil || !strings.Contains(err.Error(), "spec.roles") {
		t.Errorf("wrong type: got %v", err)
	}
}

func TestEvalIsBounded(t *testing.T) {
	list := make([]any, MaxMatches+1)
	for i := range list {
		list[i] = "m"
	}
	p, _ := parsePath("spec.l[*]")
	if _, err := p.eval(node{value: map[string]any{"spec": map[string]any{"l": list}}}); err == nil {
		t.Fatal("a selection over MaxMatches nodes must be an error")
	}
}

const base = `apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: demo}
spec:
  version: 0.1.0
  kinds:
  - {group: demo.example.com, kind: Thing, resource: things, versions: [v1], role: tracked, rules: {%s}}
  - {group: demo.example.com, kind: Ref, resource: refs, versions: [v1], role: referenced}
`

func TestCompileRefusals(t *testing.T) {
	for _, tc := range []struct{ rules, err string }{
		{`runtimes: [{path: spec, value: vllm}]`, "needs a reason"},
		{`models: [{path: spec, value: x, reason: y}]`, "only for runtimes, data and frameworks"},
		{`frameworks: [{path: spec, value: jax}]`, "needs a reason"},
		{`frameworks: [{path: spec, value: jax, reason: r, name: serving}]`, "not a framework purpose"},
		{`models: [{path: spec, name: training}]`, "only for properties, data and frameworks"},
		{`models: [{path: "spec..x"}]`, "empty field name"},
		{`runtimes: [{path: spec.x, confidence: sure}]`, "not declared or inferred"},
		{`properties: [{path: spec.x, name: "bad name"}]`, "dotted name"},
		{`references: [{path: spec.x, kind: Other, group: demo.example.com}]`, "not a referenced kind"},
		{`podTemplates: [{path: spec.x, shape: pod}]`, "not template, podSpec or container"},
		{`models: [{path: spec.x, where: [{field: a, in: [x], absent: true}]}]`, "exclusive"},
		{`models: [{path: spec.x, unknownField: 1}]`, "unknown field"},
	} {
		_, err := Parse([]byte(strings.Replace(base, "%s", tc.rules, 1)), "test")
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("rules %s: got %v, want error containing %q", tc.rules, err, tc.err)
		}
	}
	if _, err := Parse([]byte(strings.Replace(base, "%s", `models: [{path: spec.model}]`, 1)), "test"); err != nil {
		t.Fatalf("valid profile refused: %v", err)
	}
	pod := strings.Replace(strings.Replace(base, "%s", "", 1), "group: demo.example.com, kind: Thing, resource: things", `group: "", kind: Pod, resource: pods`, 1)
	if _, err := Parse([]byte(pod), "test"); err == nil || !strings.Contains(err.Error(), "core") {
		t.Errorf("a profile claiming Pod: got %v", err)
	}
	secret := strings.Replace(strings.Replace(base, "%s", "", 1), "group: demo.example.com, kind: Thing, resource: things", `group: "", kind: Secret, resource: secrets`, 1)
	if _, err := Parse([]byte(secret), "test"); err == nil || !strings.Contains(err.Error(), "core kind") {
		t.Errorf("a profile tracking Secrets: got %v", err)
	}
	own := strings.Replace(strings.Replace(base, "%s", "", 1), "group: demo.example.com, kind: Thing, resource: things", `group: aibom.dev, kind: AIBOM, resource: aiboms`, 1)
	if _, err := Parse([]byte(own), "test"); err == nil || !strings.Contains(err.Error(), "controller's own") {
		t.Errorf("a profile tracking AIBOMs: got %v", err)
	}
}

func TestScrapeConditionsAndConstants(t *testing.T) {
	a, err := Parse([]byte(strings.Replace(base, "%s", `
    runtimes: [
      {path: spec.engine, map: {VLLM: vllm}},
      {path: spec, where: [{field: engine, absent: true}], value: vllm, reason: the operator defaults to vLLM}],
    models: [{path: "spec.graph", recurse: children, where: [{field: impl, in: [TRITON]}], field: name, location: uri}]`, 1)), "test")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"},
		"spec": map[string]any{"graph": map[string]any{"name": "enc", "children": []any{
			map[string]any{"name": "gpt2", "impl": "triton", "uri": "gs://b/onnx_gpt2"}}}},
	}}
	f, err := a.Scrape(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runtimes) != 1 || f.Runtimes[0].Name != "vllm" || f.Runtimes[0].Confidence != "inferred" || f.Runtimes[0].Evidence.Locator != "spec" {
		t.Errorf("implied runtime: %+v", f.Runtimes)
	}
	if len(f.Models) != 1 || f.Models[0].Name != "gpt2" || f.Models[0].Source != "gs://b/onnx_gpt2" ||
		f.Models[0].Evidence.Locator != "spec.graph.children[0].name" {
		t.Errorf("recursive model: %+v", f.Models)
	}
	found := false
	for _, p := range f.Properties {
		found = found || p.Name == "demo.implied.vllm" && p.Value == "the operator defaults to vLLM"
	}
	if !found {
		t.Errorf("the reason of an implied runtime is not recorded: %+v", f.Properties)
	}
	// With the field set, the declared value wins and nothing is implied.
	obj.Object["spec"].(map[string]any)["engine"] = "VLLM"
	f, _ = a.Scrape(context.Background(), obj)
	if len(f.Runtimes) != 1 || f.Runtimes[0].Confidence != "declared" || f.Runtimes[0].Evidence.Locator != "spec.engine" {
		t.Errorf("declared runtime: %+v", f.Runtimes)
	}
}

// A framework rule: a constant the kind implies (located at the selected
// node, its reason recorded), or a field's value with a purpose.
func TestScrapeFrameworks(t *testing.T) {
	a, err := Parse([]byte(strings.Replace(base, "%s", `
    frameworks: [
      {path: spec.jaxReplicaSpecs, value: jax, confidence: declared, reason: a JAXJob runs JAX},
      {path: spec.eval, field: harness, name: evaluation}]`, 1)), "test")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"},
		"spec": map[string]any{"jaxReplicaSpecs": map[string]any{}, "eval": map[string]any{"harness": "LM-Evaluation-Harness"}},
	}}
	f, err := a.Scrape(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	want := []adapter.Framework{
		{Name: "jax", Purpose: adapter.PurposeTraining, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.jaxReplicaSpecs"}},
		{Name: "lm-evaluation-harness", Purpose: adapter.PurposeEvaluation, Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.eval.harness"}},
	}
	if !reflect.DeepEqual(f.Frameworks, want) {
		t.Errorf("frameworks: %+v, want %+v", f.Frameworks, want)
	}
	found := false
	for _, p := range f.Properties {
		found = found || p.Name == "demo.implied.jax" && p.Value == "a JAXJob runs JAX"
	}
	if !found {
		t.Errorf("the reason of an implied framework is not recorded: %+v", f.Properties)
	}
	// Without the node, nothing is implied.
	delete(obj.Object["spec"].(map[string]any), "jaxReplicaSpecs")
	f, _ = a.Scrape(context.Background(), obj)
	if len(f.Frameworks) != 1 {
		t.Errorf("frameworks without the replica specs: %+v", f.Frameworks)
	}
}

func TestModelCardFields(t *testing.T) {
	a, err := Parse([]byte(strings.Replace(base, "%s", `
    models: [{path: spec, field: storage.uri, architecture: arch, task: task, quantization: quant}]`, 1)), "test")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"},
		"spec": map[string]any{"storage": map[string]any{"uri": "hf://Qwen/Qwen3-8B"}, "arch": "Qwen3ForCausalLM", "task": "text-generation", "quant": "fp8"},
	}}
	f, err := a.Scrape(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Models) != 1 || f.Models[0].Name != "Qwen/Qwen3-8B" || f.Models[0].Architecture != "Qwen3ForCausalLM" ||
		f.Models[0].Task != "text-generation" || f.Models[0].Quantization != "fp8" {
		t.Fatalf("model card fields: %+v", f.Models)
	}
	if _, err := Parse([]byte(strings.Replace(base, "%s", `runtimes: [{path: spec.r, task: t}]`, 1)), "test"); err == nil {
		t.Error("task on a runtime rule must be refused")
	}
}
