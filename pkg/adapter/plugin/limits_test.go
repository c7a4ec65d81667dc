package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// The token testdata/flaky writes to its stderr.
const flakySecret = "hf_FlakyPluginSecretToken0123456789abcdef"

// hugeWidget asks testdata/flaky for a response of about n bytes.
func hugeWidget(n int64) *unstructured.Unstructured {
	w := widget("huge")
	w.Object["spec"].(map[string]any)["responseBytes"] = n
	return w
}

// heapCost scrapes obj once and returns the bytes the host allocated
// meanwhile (runtime.MemStats.TotalAlloc: an upper bound of the heap's
// growth) and the scrape's error.
func heapCost(c *plugin.Client, obj *unstructured.Unstructured) (uint64, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Scrape(context.Background(), obj)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// A plugin that answers with 60 MiB is refused at the response cap: the
// scrape fails with an error naming the plugin and the cap, the host reads
// no more than it must, and the plugin stays up for the next scrape.
func TestResponseOverTheCapIsRefused(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	c, err := plugin.Open(bin) // the default cap
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	scrapeOK(t, c)

	allocated, err := heapCost(c, hugeWidget(60<<20))
	mustContain(t, err, `adapter plugin "flaky"`, bin, "over the response cap of 4 MiB", "--adapter-plugin-max-response-bytes")
	t.Logf("60 MiB response: %v; the host allocated %.1f MiB", err, float64(allocated)/(1<<20))
	// Without the cap the host allocates the 60 MiB message and decodes it
	// (about 180 MiB); with it, gRPC's buffers and the refusal.
	if allocated > 24<<20 {
		t.Errorf("the host allocated %d MiB for a refused response, want it bounded near the cap", allocated>>20)
	}
	if c.Restarts() != 0 {
		t.Errorf("Restarts() = %d: a plugin that answered too much is alive, not restarted", c.Restarts())
	}
	scrapeOK(t, c)
}

func TestResponseCapIsConfigurable(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	c, err := plugin.Open(bin, plugin.MaxResponseBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Scrape(context.Background(), hugeWidget(512<<10)); err != nil {
		t.Fatalf("a response under the cap: %v", err)
	}
	_, err = c.Scrape(context.Background(), hugeWidget(2<<20))
	mustContain(t, err, `adapter plugin "flaky"`, "over the response cap of 1 MiB")
	scrapeOK(t, c)
}

// syncBuffer is a log sink that tests read while the plugin writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// What a plugin writes to stderr, on either stream (os.Stderr, which
// go-plugin forwards over gRPC, and its file descriptor 2), is logged
// redacted, without control characters, and cut to a bounded line.
func TestStderrIsRedactedAndCut(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	logs := &syncBuffer{}
	// Text output, as the controller logs plugins: a raw control
	// character would reach the log as written.
	c, err := plugin.Open(bin, plugin.Logger(hclog.New(&hclog.LoggerOptions{Name: "adapter-plugin.flaky", Level: hclog.Info, Output: logs})))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Scrape(context.Background(), widget("noisy")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "both markers in the log", func() bool {
		s := logs.String()
		return strings.Contains(s, "flaky(grpc): done") && strings.Contains(s, "flaky(fd2): done")
	})
	out := logs.String()
	for _, stream := range []string{"grpc", "fd2"} {
		for _, want := range []string{
			"flaky(" + stream + "): logging in with token REDACTED",
			"flaky(" + stream + "): long line yyyy",
			"flaky(" + stream + `): escape \x1b[31mred\x1b[0m\rforged`,
			"flaky(" + stream + "): json with token REDACTED",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the log does not say %q:\n%.3000s", want, out)
			}
		}
	}
	for _, secret := range []string{flakySecret, "abcdefghijklmnopqrstuvwxyz", "\x1b", "\r"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log carries %q", secret)
		}
	}
	if !strings.Contains(out, "bytes cut]") {
		t.Errorf("the long line is not marked as cut")
	}
	for _, line := range strings.Split(out, "\n") {
		// The logger adds a timestamp, the level and the name.
		if len(line) > plugin.MaxStderrLineBytes+200 {
			t.Errorf("a log line of %d bytes: %.200s...", len(line), line)
		}
	}
}

// A plugin that floods its stderr gets a burst of lines logged, one note
// that lines are dropped, and nothing more until the rate allows.
func TestStderrIsRateLimited(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	logs := &syncBuffer{}
	const burst, lines = 10, 2000
	c, err := plugin.Open(bin, plugin.StderrRate(0.001, burst),
		plugin.Logger(hclog.New(&hclog.LoggerOptions{Name: "adapter-plugin.flaky", Level: hclog.Info, Output: logs})))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	flood := widget("flood")
	flood.Object["spec"].(map[string]any)["lines"] = int64(lines)
	if _, err := c.Scrape(context.Background(), flood); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "every flood line to be logged or dropped", func() bool {
		return int(c.DroppedStderrLines())+strings.Count(logs.String(), "flaky: flood line") >= lines
	})
	out := logs.String()
	if n := strings.Count(out, "flaky: flood line"); n != burst {
		t.Errorf("%d flood lines logged, want the burst of %d", n, burst)
	}
	if n := c.DroppedStderrLines(); n != lines-burst {
		t.Errorf("DroppedStderrLines() = %d, want %d", n, lines-burst)
	}
	if n := strings.Count(out, "dropping lines until the rate falls"); n != 1 {
		t.Errorf("the drop is noted %d times, want once:\n%s", n, out)
	}
}

// The last stderr lines quoted in a crash error are redacted too.
func TestCrashErrorQuotesRedactedStderr(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	c, err := plugin.Open(bin, plugin.Logger(hclog.NewNullLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_, err = c.Scrape(context.Background(), widget("crash-secret"))
	mustContain(t, err, "crashed", "flaky: crashing with token REDACTED")
	if strings.Contains(err.Error(), flakySecret) {
		t.Errorf("the crash error quotes the token: %v", err)
	}
}

// What a plugin returns is redacted again by the host, as in-tree adapters
// redact: a plugin that forgets cannot put a secret into a document, a
// condition or an Event.
func TestPluginFindingsAndErrorsAreRedacted(t *testing.T) {
	bin := buildPlugin(t, "flaky")
	c, err := plugin.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	f, err := c.Scrape(context.Background(), widget("leaky"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{flakySecret, "hunter2"} {
		if strings.Contains(string(got), secret) {
			t.Errorf("the findings carry %q: %s", secret, got)
		}
	}
	if len(f.Models) != 1 || f.Models[0].Name != "https://REDACTED@models.example.com/llama" || f.Properties[0].Value != "Bearer REDACTED" {
		t.Errorf("findings not redacted as expected: %s", got)
	}
	if len(f.Redactions) < 3 {
		t.Errorf("redactions %+v: want one per masked value", f.Redactions)
	}

	_, err = c.Scrape(context.Background(), widget("leaky-error"))
	mustContain(t, err, `flaky: cannot log in with REDACTED\nforged line`)
	if strings.Contains(err.Error(), flakySecret) || strings.Contains(err.Error(), "\n") {
		t.Errorf("the adapter's error is not redacted and escaped: %q", err)
	}
}
