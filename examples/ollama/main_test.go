package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/aibom-dev/aibom/examples/ollama/ollama"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// TestPluginBinary builds this plugin and loads it the way the controller
// does (--adapter-plugin): a real process, the go-plugin handshake, gRPC.
func TestPluginBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds the plugin binary")
	}
	bin := filepath.Join(t.TempDir(), "ollama")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c, err := plugin.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if c.Name() != ollama.Name || len(c.Kinds()) != 1 || c.Kinds()[0].Kind != "Model" {
		t.Fatalf("plugin says it is %q with kinds %+v", c.Name(), c.Kinds())
	}
	data, err := os.ReadFile("ollama/testdata/llama-gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := conformance.DecodeObject(data)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.Scrape(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runtimes) == 0 || f.Runtimes[0].Name != ollama.RuntimeName {
		t.Errorf("runtimes over the plugin = %+v", f.Runtimes)
	}
}

// TestConformanceOfTheBinary runs the conformance suite over the built
// plugin, started as the controller starts it (conformance.RunPlugin), with
// the same fixtures as the in-process run.
func TestConformanceOfTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds the plugin binary")
	}
	bin := filepath.Join(t.TempDir(), "ollama")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fixtures, err := conformance.LoadFixtures("ollama/testdata/*.yaml", map[string]conformance.Expect{
		"phi": {
			Runtimes:       []conformance.Claim{conformance.Declared(ollama.RuntimeName)},
			Models:         []conformance.Claim{conformance.Declared("phi")},
			ImagesFromPods: []string{ollama.ServerContainer},
		},
		"bad-image": {WantErr: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunPlugin(t, bin, fixtures)
}
