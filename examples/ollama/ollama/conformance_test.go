package ollama_test

import (
	"testing"

	"github.com/aibom-dev/aibom/examples/ollama/ollama"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// fixtures loads every manifest in testdata with the facts each must give.
func fixtures(t *testing.T) []conformance.Fixture {
	t.Helper()
	// Keys are file names without extension: testdata/phi.yaml is "phi".
	fs, err := conformance.LoadFixtures("testdata/*.yaml", map[string]conformance.Expect{
		"phi": {
			Runtimes:       []conformance.Claim{conformance.Declared(ollama.RuntimeName)},
			Models:         []conformance.Claim{conformance.Declared("phi")},
			ImagesFromPods: []string{ollama.ServerContainer},
		},
		"llama-gpu": {
			Runtimes: []conformance.Claim{conformance.Declared(ollama.RuntimeName)},
			Models:   []conformance.Claim{conformance.Declared("llama3.1")},
			Properties: map[string]string{
				ollama.PropertyReplicas: "2", ollama.PropertyStorageClassName: "fast-ssd",
			},
		},
		// spec.image is a list: the scrape must fail.
		"bad-image": {WantErr: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestConformance runs the conformance suite on the adapter in process.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.NewHarness(ollama.New(), fixtures(t)...))
}

// TestConformanceOverPlugin runs the same suite through the plugin
// transport (gRPC, in memory): what the controller gets from the plugin
// binary.
func TestConformanceOverPlugin(t *testing.T) {
	c, err := plugin.InProcess(ollama.New())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if c.Name() != ollama.Name {
		t.Fatalf("over the transport the adapter is named %q", c.Name())
	}
	conformance.Run(t, conformance.NewHarness(c, fixtures(t)...))
}
