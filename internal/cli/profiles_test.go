package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type scannedBOM struct {
	Metadata struct {
		Component struct {
			Name string `json:"name"`
		} `json:"component"`
	} `json:"metadata"`
	Components []struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Evidence struct {
			Occurrences []struct {
				Location string `json:"location"`
			} `json:"occurrences"`
		} `json:"evidence"`
	} `json:"components"`
}

func scanJSON(t *testing.T, args ...string) ([]scannedBOM, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append([]string{"scan", "-o", "json"}, args...), &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("aibom scan %v: exit %d: %s", args, code, stderr.String())
	}
	out := bytes.TrimSpace(stdout.Bytes())
	var docs []scannedBOM
	if len(out) > 0 && out[0] == '[' {
		if err := json.Unmarshal(out, &docs); err != nil {
			t.Fatal(err)
		}
	} else {
		var d scannedBOM
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs, stderr.String()
}

// has reports whether a document names a component of a type, and the
// locators of its evidence.
func (b scannedBOM) has(typ, name string) (bool, []string) {
	for _, c := range b.Components {
		if c.Type == typ && c.Name == name {
			var locs []string
			for _, o := range c.Evidence.Occurrences {
				locs = append(locs, o.Location)
			}
			return true, locs
		}
	}
	return false, nil
}

// The shipped profiles give one root per operator object, with the model
// and the runtime the CR declares or implies, located at its field.
func TestScanShippedProfiles(t *testing.T) {
	dir := filepath.Join("..", "..", "adapters", "profiles", "testdata")
	for _, tc := range []struct {
		file, runtime, model, locator string
	}{
		{"kaito/workspace-preset.yaml", "vllm", "phi-4-mini-instruct", "inference.preset.name"},
		{"kubeai/model-hf.yaml", "vllm", "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "spec.url"},
		{"llmaz/playground.yaml", "vllm", "Qwen/Qwen2-0.5B-Instruct", "OpenModel/qwen2-0--5b:spec.source.modelHub.modelID"},
		{"aibrix/stormservice.yaml", "vllm", "Qwen/Qwen3-8B", "spec.template.spec.roles[0].template"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			docs, _ := scanJSON(t, "-f", filepath.Join(dir, tc.file))
			if len(docs) != 1 {
				t.Fatalf("%d documents, want one root", len(docs))
			}
			if ok, _ := docs[0].has("application", tc.runtime); !ok {
				t.Errorf("no runtime %q: %+v", tc.runtime, docs[0].Components)
			}
			ok, locs := docs[0].has("machine-learning-model", tc.model)
			if !ok {
				t.Fatalf("no model %q: %+v", tc.model, docs[0].Components)
			}
			if !strings.Contains(strings.Join(locs, " "), tc.locator) {
				t.Errorf("model %q located at %q, want one starting %q", tc.model, locs, tc.locator)
			}
		})
	}
}

// --adapter-profile loads a profile from a file, as the controller does.
func TestScanLoadsAdapterProfileFile(t *testing.T) {
	dir := t.TempDir()
	profile := `apiVersion: aibom.dev/v1alpha1
kind: AIBOMAdapterProfile
metadata: {name: gadgets}
spec:
  version: 0.1.0
  kinds:
  - group: gadgets.example.com
    kind: Gadget
    resource: gadgets
    versions: [v1]
    role: tracked
    rules:
      models: [{path: spec.weights}]
      runtimes: [{path: spec, value: sglang, reason: gadgets run SGLang}]
`
	obj := `apiVersion: gadgets.example.com/v1
kind: Gadget
metadata: {name: g, namespace: ml}
spec: {weights: "hf://Qwen/Qwen3-8B"}
`
	must(t, os.WriteFile(filepath.Join(dir, "gadgets.yaml"), []byte(profile), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "gadget.yaml"), []byte(obj), 0o600))
	docs, _ := scanJSON(t, "-f", filepath.Join(dir, "gadget.yaml"), "--adapter-profile", filepath.Join(dir, "gadgets.yaml"))
	if len(docs) != 1 {
		t.Fatalf("%d documents, want 1", len(docs))
	}
	if ok, _ := docs[0].has("machine-learning-model", "Qwen/Qwen3-8B"); !ok {
		t.Errorf("no model: %+v", docs[0].Components)
	}
	if ok, _ := docs[0].has("application", "sglang"); !ok {
		t.Errorf("no implied runtime: %+v", docs[0].Components)
	}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"scan", "-f", filepath.Join(dir, "gadget.yaml"), "--adapter-profile", filepath.Join(dir, "gadget.yaml")}, &stdout, &stderr); code != ExitUsage {
		t.Errorf("a file that is not a profile: exit %d, want %d (%s)", code, ExitUsage, stderr.String())
	}
}

// A serving runtime no root uses is reported for what it defines, marked,
// unless --unused-references=false.
func TestScanReportsUnusedReferencedObjects(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "rt.yaml"), []byte(`apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: ollama, namespace: ml}
spec:
  containers: [{name: kserve-container, image: "ollama/ollama:0.5.7"}]
`), 0o600))
	docs, stderr := scanJSON(t, "-f", filepath.Join(dir, "rt.yaml"))
	if len(docs) != 1 {
		t.Fatalf("%d documents, want 1", len(docs))
	}
	if ok, _ := docs[0].has("application", "ollama"); !ok {
		t.Errorf("no runtime: %+v", docs[0].Components)
	}
	if !strings.Contains(stderr, "ServingRuntime/ml/ollama") || !strings.Contains(stderr, "nothing runs them") {
		t.Errorf("stderr does not say the runtime is unused: %q", stderr)
	}
	docs, _ = scanJSON(t, "-f", filepath.Join(dir, "rt.yaml"), "--unused-references=false")
	if len(docs) != 0 && docs[0].Components != nil {
		t.Errorf("--unused-references=false still reports it: %+v", docs)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
