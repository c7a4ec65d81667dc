package kserve_test

import (
	"context"
	"testing"

	"github.com/aibom-dev/aibom/examples/kserve/kserve"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

func scrape(t *testing.T, doc string) adapter.Findings {
	t.Helper()
	obj, err := conformance.DecodeObject([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	f, err := kserve.New().Scrape(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestModelImageIsTheKServeContainer(t *testing.T) {
	f := scrape(t, `
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: m}
spec:
  predictor:
    model:
      modelFormat: {name: pytorch}
      image: pytorch/torchserve-kfs:0.9.0
`)
	if len(f.Containers) != 1 {
		t.Fatalf("containers = %+v", f.Containers)
	}
	c := f.Containers[0]
	if c.Name != kserve.ModelContainer || c.Image != "pytorch/torchserve-kfs:0.9.0" || c.Evidence.Locator != "spec.predictor.model.image" {
		t.Errorf("container = %+v", c)
	}
	if len(f.Runtimes) == 0 || f.Runtimes[0].Name != "pytorch" || f.Runtimes[0].Evidence.Locator != "spec.predictor.model.modelFormat.name" {
		t.Errorf("runtimes = %+v", f.Runtimes)
	}
}

func TestNoModelNoContainers(t *testing.T) {
	f := scrape(t, `
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: empty}
spec: {predictor: {}}
`)
	if len(f.Containers)+len(f.Runtimes)+len(f.Models) != 0 || len(f.Scrapers) != 1 {
		t.Errorf("findings = %+v", f)
	}
}
