package conformance_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// widgets is a small adapter, written the way the contract asks: it tracks
// Widget (example.aibom.dev, v1 and v1beta1) and walks WidgetPart. A Widget
// names its image in spec.image and its model in spec.model, and its labels
// in spec.labels become properties.
type widgets struct{}

const widgetGroup = "example.aibom.dev"

func (widgets) Name() string { return "widgets" }

func (widgets) Kinds() []adapter.Kind {
	return []adapter.Kind{
		// A Widget's pods are controlled by its WidgetParts.
		{Group: widgetGroup, Kind: "Widget", Resource: "widgets", Versions: []string{"v1", "v1beta1"}, Role: adapter.RoleTracked,
			PodOwners: []schema.GroupKind{{Group: widgetGroup, Kind: "WidgetPart"}}},
		{Group: widgetGroup, Kind: "WidgetPart", Resource: "widgetparts", Versions: []string{"v1"}, Role: adapter.RoleWalkOnly},
	}
}

func (widgets) Scrape(_ context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil || obj.Object == nil {
		return adapter.Findings{}, fmt.Errorf("widgets: no object")
	}
	gvk := obj.GroupVersionKind()
	if gvk.Group != widgetGroup || gvk.Kind != "Widget" || (gvk.Version != "v1" && gvk.Version != "v1beta1") {
		return adapter.Findings{}, fmt.Errorf("widgets: %s is not a tracked kind", gvk)
	}
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok && obj.Object["spec"] != nil {
		return adapter.Findings{}, fmt.Errorf("widgets: spec: expected object, got %T", obj.Object["spec"])
	}
	f := adapter.Findings{Scrapers: []adapter.Scraper{{Name: "widgets", Version: "0.1.0", Method: "crd-spec"}}}
	image, ok := spec["image"].(string)
	if !ok && spec["image"] != nil {
		return adapter.Findings{}, fmt.Errorf("widgets: spec.image: expected string, got %T", spec["image"])
	}
	if image != "" {
		f.Containers = append(f.Containers, adapter.Container{Name: "widget", Image: image,
			Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: "spec.image"}})
	}
	if model, ok := spec["model"].(string); ok && model != "" {
		masked, reasons := podtemplate.Redact(model)
		for _, r := range reasons {
			f.Redactions = append(f.Redactions, adapter.Redaction{Locator: "spec.model", Reason: r})
		}
		f.Models = append(f.Models, adapter.Model{Name: masked, Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.model"}})
	}
	labels, _ := spec["labels"].(map[string]any)
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := labels[k].(string); ok {
			f.Properties = append(f.Properties, adapter.Property{Name: "widget.label." + k, Value: v})
		}
	}
	return f, nil
}

const widgetV1 = `
apiVersion: example.aibom.dev/v1
kind: Widget
metadata: {name: w, namespace: default}
spec:
  image: vllm/vllm-openai:v0.6.3
  model: meta-llama/Llama-3.1-8B-Instruct
  env:
  - {name: HF_TOKEN, value: hf_abcdefghijklmnopqrstuvwxyz0123456789AB}
  labels: {a: "1", b: "2", c: "3", d: "4", e: "5", f: "6", g: "7", h: "8"}
`

const widgetV1beta1 = `
apiVersion: example.aibom.dev/v1beta1
kind: Widget
metadata: {name: w}
spec:
  image: ollama/ollama:0.5.7
`

func mustDecode(doc string) *unstructured.Unstructured {
	obj, err := conformance.DecodeObject([]byte(doc))
	if err != nil {
		panic(err)
	}
	return obj
}

func widgetFixtures() []conformance.Fixture {
	return []conformance.Fixture{
		{
			Name:   "widget-v1",
			Object: mustDecode(widgetV1),
			Expect: conformance.Expect{
				Images:     []string{"vllm/vllm-openai:v0.6.3"},
				Models:     []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-8B-Instruct")},
				Properties: map[string]string{"widget.label.a": "1"},
			},
		},
		{Name: "widget-v1beta1", Object: mustDecode(widgetV1beta1), Expect: conformance.Expect{Images: []string{"ollama/ollama:0.5.7"}}},
		{Name: "spec-string", Object: mustDecode("{apiVersion: example.aibom.dev/v1, kind: Widget, spec: x}"), WantErr: true},
	}
}

// In an adapter's package, a _test.go file runs the suite with one call.
func ExampleRun() {
	// func TestConformance(t *testing.T) {
	//	fixtures, err := conformance.LoadFixtures("testdata/*.yaml", map[string]conformance.Expect{
	//		"widget-v1": {Images: []string{"vllm/vllm-openai:v0.6.3"}},
	//	})
	//	if err != nil {
	//		t.Fatal(err)
	//	}
	//	conformance.Run(t, conformance.NewHarness(widgets.New(), fixtures...))
	// }
	var _ func(*testing.T, conformance.Harness, ...conformance.Option) = conformance.Run
}

// RunTB with a Recorder runs the suite outside go test and keeps the report.
func ExampleRunTB() {
	rec := &conformance.Recorder{}
	conformance.RunTB(rec, conformance.NewHarness(widgets{}, widgetFixtures()...), conformance.HugeList(100))
	var top []string
	for _, name := range rec.Tests() {
		if !strings.Contains(name, "/") {
			top = append(top, name)
		}
	}
	fmt.Println(strings.Join(top, " "))
	fmt.Print(rec.Report())
	// Output:
	// Declarations Fixtures Determinism NoMutation WellFormed NoSecrets MalformedInput CrossVersion NonTrackedKinds Expectations
	// PASS
}
