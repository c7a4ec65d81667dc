package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

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

// BenchmarkHugeResponse measures what a large response costs the host
// under the default response cap: a 60 MiB response (refused unread), and
// the largest response the cap accepts (decoded and redacted). It reports
// the bytes the host allocated per scrape and the peak growth of its live
// heap, sampled every millisecond. Run it with -benchtime 3x.
func BenchmarkHugeResponse(b *testing.B) {
	bin := buildPlugin(b, "flaky")
	for _, tc := range []struct {
		name     string
		size     int64
		accepted bool
	}{
		{"60MiB-refused", 60 << 20, false},
		{"just-under-the-cap-accepted", plugin.DefaultMaxResponseBytes - 4<<10, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := plugin.Open(bin, plugin.ScrapeTimeout(time.Minute))
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			obj := hugeWidget(tc.size)
			var allocated, peak uint64
			for b.Loop() {
				a, p, err := scrapeHeapPeak(c, obj)
				if (err == nil) != tc.accepted {
					b.Fatalf("a response of %d bytes: err = %v", tc.size, err)
				}
				allocated += a
				peak = max(peak, p)
			}
			b.ReportMetric(float64(allocated)/float64(b.N)/(1<<20), "alloc-MiB/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-growth-MiB")
		})
	}
}

// scrapeHeapPeak scrapes obj once, after a GC, and returns the bytes the
// host allocated meanwhile and the peak growth of its live heap objects.
func scrapeHeapPeak(c *plugin.Client, obj *unstructured.Unstructured) (allocated, peak uint64, err error) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	base := heap()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var top uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				done <- top
				return
			case <-t.C:
				if h := heap(); h > base && h-base > top {
					top = h - base
				}
			}
		}
	}()
	_, err = c.Scrape(context.Background(), obj)
	close(stop)
	peak = <-done
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, peak, err
}
