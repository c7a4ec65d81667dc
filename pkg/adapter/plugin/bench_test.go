package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/adapters/dynamo"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// benchObject is the object every benchmark scrapes: a disaggregated vLLM
// DynamoGraphDeployment (three components), a mid-sized spec.
func benchObject(b *testing.B) *unstructured.Unstructured {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(adaptersDir, "dynamo", "testdata", "vllm-disagg-v1beta1.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	obj, err := conformance.DecodeObject(data)
	if err != nil {
		b.Fatal(err)
	}
	return obj
}

func benchScrape(b *testing.B, a adapter.Adapter) {
	obj := benchObject(b)
	ctx := context.Background()
	if _, err := a.Scrape(ctx, obj); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Scrape(ctx, obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScrapeInProcess scrapes with the adapter compiled in.
func BenchmarkScrapeInProcess(b *testing.B) { benchScrape(b, dynamo.New()) }

// BenchmarkScrapeOverPlugin scrapes through the plugin transport in
// process: JSON codec, gRPC, an in-memory listener. Allocations are those of
// both sides.
func BenchmarkScrapeOverPlugin(b *testing.B) {
	c, err := plugin.InProcess(dynamo.New())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	benchScrape(b, c)
}

// BenchmarkScrapeOverPluginProcess scrapes through a plugin process (the
// dynamo adapter built from testdata/dynamo), over go-plugin's Unix socket.
// Allocations are the host's only.
func BenchmarkScrapeOverPluginProcess(b *testing.B) {
	c, err := plugin.Open(buildPlugin(b, "dynamo"))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	benchScrape(b, c)
}
