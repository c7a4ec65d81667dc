package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// The --adapter-plugin flag takes PATH@sha256:<hex>: a malformed checksum
// is a flag error, a mismatch refuses to start the plugin, a match loads
// it; the response cap reaches the plugin client.
func TestAdapterPluginFlagPinsTheChecksum(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "flaky")
	build := exec.Command("go", "build", "-o", bin, "../../pkg/adapter/plugin/testdata/flaky")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	defer plugin.CleanupClients()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)

	var l pluginList
	if err := l.Set(bin + "@sha256:1234"); err == nil || !strings.Contains(err.Error(), "64 hexadecimal digits") {
		t.Errorf("Set(malformed checksum) = %v, want an error", err)
	}

	wrong := strings.Repeat("0", 64)
	_, err = openPlugins([]string{bin + "@sha256:" + wrong}, "")
	if err == nil || !strings.Contains(err.Error(), "--adapter-plugin: adapter plugin "+bin+" has SHA-256 "+hex.EncodeToString(sum[:])) {
		t.Fatalf("a wrong checksum: err = %v, want a refusal naming both checksums", err)
	}

	adapters, err := openPlugins([]string{bin + "@sha256:" + hex.EncodeToString(sum[:])}, "", plugin.MaxResponseBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if len(adapters) != 1 || adapters[0].Name() != "flaky" {
		t.Fatalf("openPlugins = %v", adapters)
	}
	huge := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "huge", "namespace": "ml"},
		"spec":     map[string]any{"responseBytes": int64(2 << 20)},
	}}
	_, err = adapters[0].Scrape(context.Background(), huge)
	if err == nil || !strings.Contains(err.Error(), "over the response cap of 1 MiB") {
		t.Errorf("a 2 MiB response under a 1 MiB cap: err = %v", err)
	}
}
