package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// largeManifest writes a JSON List of about size bytes: vLLM Deployments,
// each with many small nested objects (the shape that made a 30 MB input
// cost 1.7 GB before the scan's memory followed its input).
func largeManifest(tb testing.TB, dir string, size int) (string, int) {
	tb.Helper()
	var items []any
	n := 0
	for total := 0; total < size; n++ {
		env := make([]any, 50)
		for j := range env {
			env[j] = map[string]any{"name": fmt.Sprintf("E%d", j), "value": fmt.Sprint(j), "extra": map[string]any{"a": map[string]any{"b": j}}}
		}
		d := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": fmt.Sprintf("d%d", n), "namespace": "ns"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "c", "image": "vllm/vllm-openai:v0.6.3", "args": []any{"--model", "Qwen/Qwen2.5-0.5B"}, "env": env}}}}}}
		b, err := json.Marshal(d)
		require.NoError(tb, err)
		total += len(b)
		items = append(items, d)
	}
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	require.NoError(tb, err)
	p := filepath.Join(dir, "large.json")
	require.NoError(tb, os.WriteFile(p, data, 0o644))
	return p, len(data)
}

// peakHeap samples the Go heap in use while fn runs.
func peakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	return peak.Load()
}

// BenchmarkScanLargeJSON reads and evaluates a 30 MB manifest as `aibom
// scan` does and reports the peak heap in use as a multiple of the input
// (x-input; the target is at most about 10).
//
//	go test ./internal/scan -run XXX -bench ScanLargeJSON -benchtime 1x
func BenchmarkScanLargeJSON(b *testing.B) {
	path, size := largeManifest(b, b.TempDir(), 30<<20)
	adapters, err := intree.Select("all")
	require.NoError(b, err)
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		p := peakHeap(func() {
			reg, err := graph.NewRegistry(adapters...)
			require.NoError(b, err)
			snap, err := LoadFiles(reg, FileOptions{Paths: []string{path}})
			require.NoError(b, err)
			roots, err := Evaluate(context.Background(), reg, graph.NewMemoryStore(snap.Objects),
				Options{Tool: document.Tool{Name: document.ToolName, Version: "test"}, MaxDocumentBytes: 512 * 1024})
			require.NoError(b, err)
			require.NotEmpty(b, roots)
		})
		peak = max(peak, p)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peak)/float64(size), "x-input")
}
