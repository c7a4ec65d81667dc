package idle

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// BenchmarkInformerPerNamespace measures what the alternative design of
// caches that follow opt-in would cost: one informer per kind and opted-in
// namespace (a cache started when a namespace opts in) instead of one
// cluster-wide watch per kind that drops other namespaces' objects. It
// starts one Pod informer in each of N empty namespaces and reports the
// controller-side cost of one informer (heap after a GC, goroutines) and the
// watches opened; the API server holds one watcher per watch as well.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test ./test/envtest/idle/ -run '^$' -bench InformerPerNamespace -benchtime 1x
func BenchmarkInformerPerNamespace(b *testing.B) {
	for _, n := range []int{50, 500} {
		b.Run(fmt.Sprintf("namespaces=%d", n), func(b *testing.B) {
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				var names []string
				for i := range n {
					ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: fmt.Sprintf("cost%d-", i)}}
					require.NoError(b, env.Client.Create(ctx, ns))
					names = append(names, ns.Name)
				}
				// One HTTP client (and connection pool) for all, as the
				// supervisor's kinds share one.
				httpClient, err := rest.HTTPClientFor(env.Config)
				require.NoError(b, err)
				heap0, g0 := settledHeap()
				for _, ns := range names {
					c, err := cache.New(env.Config, cache.Options{HTTPClient: httpClient, Scheme: env.Client.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
					require.NoError(b, err)
					pod := &unstructured.Unstructured{}
					pod.SetAPIVersion("v1")
					pod.SetKind("Pod")
					_, err = c.GetInformer(ctx, pod)
					require.NoError(b, err)
					go func() { _ = c.Start(ctx) }()
					require.True(b, c.WaitForCacheSync(ctx))
				}
				heap1, g1 := settledHeap()
				b.ReportMetric(float64(heap1-heap0)/float64(n)/1024, "KiB-heap/informer")
				b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/informer")
				b.ReportMetric(float64(n), "watches")
				cancel()
				for _, ns := range names {
					_ = env.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
				}
			}
		})
	}
}

func settledHeap() (uint64, int) {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse, runtime.NumGoroutine()
}
