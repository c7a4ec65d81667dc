package ollama_test

import (
	"context"
	"testing"

	"github.com/aibom-dev/aibom/examples/ollama/ollama"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

func scrape(t *testing.T, doc string) adapter.Findings {
	t.Helper()
	obj, err := conformance.DecodeObject([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ollama.New().Scrape(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestModelReference(t *testing.T) {
	for ref, want := range map[string][2]string{
		"phi":                                   {"phi", ""},
		"llama3.1:8b":                           {"llama3.1", "8b"},
		"registry.ollama.ai/library/qwen2.5:7b": {"qwen2.5", "7b"},
		"registry.example.com:5000/team/mymodel:1": {"registry.example.com:5000/team/mymodel", "1"},
	} {
		f := scrape(t, "apiVersion: ollama.ayaka.io/v1\nkind: Model\nmetadata: {name: m}\nspec: {image: \""+ref+"\"}\n")
		if len(f.Models) != 1 || f.Models[0].Name != want[0] || f.Models[0].Version != want[1] || f.Models[0].Source != "ollama://"+ref {
			t.Errorf("%s: models = %+v", ref, f.Models)
		}
	}
}

func TestGPURequest(t *testing.T) {
	f := scrape(t, `
apiVersion: ollama.ayaka.io/v1
kind: Model
metadata: {name: m}
spec:
  image: phi
  resources: {limits: {nvidia.com/gpu: "2"}}
`)
	if len(f.Accelerators) != 1 || f.Accelerators[0].Resource != "nvidia.com/gpu" || f.Accelerators[0].Quantity != "2" {
		t.Errorf("accelerators = %+v", f.Accelerators)
	}
}

func TestNoImageIsAnError(t *testing.T) {
	obj, err := conformance.DecodeObject([]byte("apiVersion: ollama.ayaka.io/v1\nkind: Model\nmetadata: {name: m}\nspec: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ollama.New().Scrape(context.Background(), obj); err == nil {
		t.Fatal("a Model without spec.image scraped without error")
	}
}
