package scale

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"time"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// apiServerMetrics returns a scraper of the API server's own /metrics (the
// harness's admin client; not the controller's requests).
func apiServerMetrics(cfg *rest.Config) func(context.Context) (Metrics, error) {
	return func(ctx context.Context) (Metrics, error) {
		raw, err := apiServerGet(ctx, cfg, "/metrics")
		if err != nil {
			return nil, fmt.Errorf("API server metrics: %w", err)
		}
		return ParseMetrics(bytes.NewReader(raw))
	}
}

// apiServerGet reads one of the API server's own endpoints (its metrics, its
// profiles) with the harness's credentials; params are query parameters,
// name then value.
func apiServerGet(ctx context.Context, cfg *rest.Config, path string, params ...string) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	req := cs.Discovery().RESTClient().Get().AbsPath(path)
	for i := 0; i+1 < len(params); i += 2 {
		req = req.Param(params[i], params[i+1])
	}
	return req.DoRaw(ctx)
}

// apiLatency is the API server's latency for the AIBOM writes (POST and
// PATCH of aiboms, status included) between two scrapes, and the requests
// priority and fairness rejected meanwhile.
func apiLatency(after, before Metrics) *APIServerLatency {
	const name = "apiserver_request_duration_seconds"
	sum := map[float64]float64{}
	for _, verb := range []string{"POST", "PATCH"} {
		match := map[string]string{"resource": "aiboms", "verb": verb}
		for _, b := range HistogramDelta(after.Histogram(name, match), before.Histogram(name, match)) {
			sum[b.UpperBound] += b.Count
		}
	}
	buckets := make([]Bucket, 0, len(sum))
	for le, c := range sum {
		buckets = append(buckets, Bucket{UpperBound: le, Count: c})
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].UpperBound < buckets[j].UpperBound })
	l := &APIServerLatency{P50: Quantile(0.5, buckets), P99: Quantile(0.99, buckets),
		Rejected: int(after.Sum("apiserver_flowcontrol_rejected_requests_total", nil) - before.Sum("apiserver_flowcontrol_rejected_requests_total", nil))}
	if len(buckets) > 0 {
		l.Writes = int(buckets[len(buckets)-1].Count)
	}
	if math.IsNaN(l.P50) || math.IsNaN(l.P99) {
		l.P50, l.P99 = 0, 0
	}
	return l
}

// toggle opts the load's first namespace out, waits until its AIBOMs are
// gone and the controller settled, then opts it in again and waits until
// they are all correct, measuring time, requests and the live heap.
func toggle(ctx context.Context, opts Options, c client.Client, ctl *controllerProcess, track *tracker, load Load, logf func(string, ...any)) (*Toggle, error) {
	ns := load.Namespaces[0]
	part := load.In(map[string]bool{ns: true})
	t := &Toggle{Namespace: ns, Roots: len(part.Chains), Objects: part.Objects()}
	var err error
	if t.LiveHeapBefore, err = liveHeap(ctx, ctl); err != nil {
		return nil, err
	}
	m0, err := scrape(ctx, ctl.metricsURL)
	if err != nil {
		return nil, err
	}

	logf("opting %s out (%d roots)", ns, t.Roots)
	track.expect(load, ns, false)
	start := time.Now()
	if err := setOptIn(ctx, c, ns, false); err != nil {
		return nil, err
	}
	if err := waitExact(ctx, opts, track); err != nil {
		return nil, err
	}
	t.OptOutSeconds = time.Since(start).Seconds()
	m1, err := settle(ctx, opts, ctl)
	if err != nil {
		return nil, err
	}
	t.OptOutRequests = diff(m1.Requests(), m0.Requests())
	t.CachedBefore, t.CachedOptedOut = int(m0.Sum("aibom_cached_objects", nil)), int(m1.Sum("aibom_cached_objects", nil))
	if t.LiveHeapOptedOut, err = liveHeap(ctx, ctl); err != nil {
		return nil, err
	}

	logf("opting %s in again", ns)
	m2, err := scrape(ctx, ctl.metricsURL)
	if err != nil {
		return nil, err
	}
	track.expect(load, ns, true)
	start = time.Now()
	if err := setOptIn(ctx, c, ns, true); err != nil {
		return nil, err
	}
	if err := waitExact(ctx, opts, track); err != nil {
		return nil, err
	}
	t.OptInSeconds = time.Since(start).Seconds()
	m3, err := settle(ctx, opts, ctl)
	if err != nil {
		return nil, err
	}
	t.OptInRequests = diff(m3.Requests(), m2.Requests())
	t.CachedAfter = int(m3.Sum("aibom_cached_objects", nil))
	if t.LiveHeapAfter, err = liveHeap(ctx, ctl); err != nil {
		return nil, err
	}
	return t, nil
}

func setOptIn(ctx context.Context, c client.Client, ns string, on bool) error {
	var n corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, &n); err != nil {
		return err
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if on {
		n.Labels[graph.OptInLabel] = "true"
	} else {
		delete(n.Labels, graph.OptInLabel)
	}
	return c.Update(ctx, &n)
}

// waitExact polls until the AIBOM set is exactly the expected one.
func waitExact(ctx context.Context, opts Options, t *tracker) error {
	deadline := time.Now().Add(opts.Timeout)
	for {
		ok, wrong, extra, reasons := t.state(5)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s, %d AIBOMs wrong or missing and %d extra: %v", opts.Timeout, wrong, extra, reasons)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// liveHeap forces a GC in the controller (its heap profile endpoint) and
// returns the heap allocated right after it.
func liveHeap(ctx context.Context, ctl *controllerProcess) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ctl.pprofURL+"heap?gc=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("heap profile: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	m, err := scrape(ctx, ctl.metricsURL)
	if err != nil {
		return 0, err
	}
	return int64(m.Sum("go_memstats_heap_alloc_bytes", nil)), nil
}
