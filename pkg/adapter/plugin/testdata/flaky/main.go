// Command flaky is an adapter plugin for the host's tests: it scrapes
// Widget.example.com objects, and crashes, hangs or panics on request (the
// object's name says which).
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

type flaky struct{}

func (flaky) Name() string { return "flaky" }

func (flaky) Kinds() []adapter.Kind {
	return []adapter.Kind{{Group: "example.com", Kind: "Widget", Resource: "widgets", Versions: []string{"v1"}, Role: adapter.RoleTracked}}
}

func (flaky) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj.GetKind() != "Widget" {
		return adapter.Findings{}, fmt.Errorf("flaky: kind %q is not tracked", obj.GetKind())
	}
	switch obj.GetName() {
	case "crash":
		fmt.Fprintln(os.Stderr, "flaky: crashing on purpose")
		os.Exit(3)
	case "hang":
		select {} // ignores its context on purpose
	case "panic":
		panic("flaky: panicking on purpose")
	case "fail":
		return adapter.Findings{}, fmt.Errorf("flaky: refusing %s on purpose", obj.GetName())
	}
	image, _, _ := unstructured.NestedString(obj.Object, "spec", "image")
	return adapter.Findings{
		Scrapers:   []adapter.Scraper{{Name: "flaky", Version: "0.0.1", Method: "crd-spec"}},
		Containers: []adapter.Container{{Name: "main", Image: image, Evidence: adapter.Evidence{Source: adapter.SourceCRDField, Locator: "spec.image"}}},
	}, nil
}

func main() { plugin.Serve(flaky{}) }
