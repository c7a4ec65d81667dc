package sink

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// secretParts are planted in every part of the sink URLs below; none may
// reach any output.
var secretParts = []string{"hunter2pass", "alice-user", "T0SECRETPATH", "B0SECRETPATH", "xoxsecrettoken", "querysecret123", "fragsecret99"}

// echo is what the receiver replies; a reply never reaches an output.
const echo = "RECEIVER-REPLY"

func secretURL(origin string) string {
	u := strings.Replace(origin, "://", "://alice-user:hunter2pass@", 1)
	return u + "/services/T0SECRETPATH/B0SECRETPATH/xoxsecrettoken?token=querysecret123#fragsecret99"
}

func TestRedactURLKeepsTheOriginOnly(t *testing.T) {
	for raw, want := range map[string]string{
		secretURL("https://hooks.example:8443"):    "https://hooks.example:8443",
		"https://hooks.example/T0SECRETPATH":       "https://hooks.example",
		"http://[::1]:80/x?token=querysecret123":   "http://[::1]:80",
		"https://hooks.example/%zz?querysecret123": "(invalid URL)",
		"not a url": "(invalid URL)",
	} {
		require.Equal(t, want, RedactURL(raw), raw)
	}
	s := NewScrubber(secretURL("https://hooks.example"))
	msg := s.Scrub(`Post "` + secretURL("https://hooks.example") + `": EOF; querysecret123 xoxsecrettoken alice-user%3Ahunter2pass`)
	for _, p := range secretParts {
		require.NotContains(t, msg, p)
	}
	require.Contains(t, msg, "hooks.example", "the host stays")
}

func TestSinkURLSecretsReachNoOutput(t *testing.T) {
	code := http.StatusInternalServerError
	var mu sync.Mutex
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c := code
		mu.Unlock()
		w.WriteHeader(c)
		_, _ = w.Write([]byte(echo + " " + r.URL.String() + " " + strings.Join(secretParts, " ")))
	}))
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	unreachable := "https://" + closed.Addr().String()
	require.NoError(t, closed.Close())

	var logs bytes.Buffer
	var logMu sync.Mutex
	log := funcr.New(func(prefix, args string) {
		logMu.Lock()
		defer logMu.Unlock()
		logs.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 10})
	rec := &recorder{}
	o := Options{AttemptTimeout: 5 * time.Second, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, MaxElapsed: 100 * time.Millisecond}
	d := NewDispatcher(o, rec, log)
	ca := pemOf(srv.Certificate())
	mk := func(name, url string, dest *Destinations) Sink {
		c, err := NewHTTPClient(ClientOptions{CABundle: ca, Destinations: dest})
		require.NoError(t, err)
		return &Webhook{SinkName: name, URL: url, Client: c}
	}
	dtc, err := NewHTTPClient(ClientOptions{CABundle: ca, Destinations: loopback})
	require.NoError(t, err)
	sinks := []Sink{
		mk("redact-5xx", secretURL(srv.URL), loopback),             // transient, retries exhausted
		mk("redact-unreachable", secretURL(unreachable), loopback), // *url.Error quoting the URL
		mk("redact-refused", secretURL(srv.URL), nil),              // loopback not allowed
		mk("redact-invalid", srv.URL+"/%zz/xoxsecrettoken?token=querysecret123", loopback),
		&DependencyTrack{SinkName: "redact-dtrack", BaseURL: secretURL(unreachable), Client: dtc, APIKey: "k"},
	}
	d.SetSinks(sinks)
	start(t, d)
	e := ev("a", sha256Hex([]byte(`{}`)))
	d.Offer(e)
	for _, s := range sinks {
		rec.waitFor(t, func(r Result) bool { return r.Sink == s.Name() && r.State == v1alpha1.DeliveryFailed })
	}
	// A 4xx, refused at once, with the reply's body.
	mu.Lock()
	code = http.StatusUnauthorized
	mu.Unlock()
	d.Offer(ev("b", sha256Hex([]byte(`{}`))))
	res := rec.waitFor(t, func(r Result) bool {
		return r.Sink == "redact-5xx" && r.AIBOM.Name == "b" && r.State == v1alpha1.DeliveryFailed
	})
	require.Equal(t, "Rejected", res.Reason)
	require.Contains(t, res.Message, "HTTP 401 Unauthorized (rejected)", "the reply reaches the status as a code and a class")

	refused := rec.waitFor(t, func(r Result) bool { return r.Sink == "redact-refused" })
	require.Equal(t, v1alpha1.ReasonDestinationRefused, refused.Reason)

	var metricsText bytes.Buffer
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		_, err := expfmt.MetricFamilyToText(&metricsText, f)
		require.NoError(t, err)
	}
	outputs := map[string]string{"logs": logs.String(), "metrics": metricsText.String()}
	for i, r := range rec.results() {
		t.Logf("%s %s %s: %s", r.Sink, r.State, r.Reason, r.Message)
		outputs["result "+r.Sink+" "+string(rune('0'+i%10))+" message"] += r.Message
		outputs["result "+r.Sink+" location"] += r.Location
	}
	for where, text := range outputs {
		for _, p := range append(secretParts, echo) {
			require.NotContains(t, text, p, "%s: %s", where, text)
		}
	}
	require.Contains(t, logs.String(), srv.URL, "the origin is what a person reads")
}
