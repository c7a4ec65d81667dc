package sinks

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/testpki"
	"github.com/aibom-dev/aibom/pkg/sink"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// receiver is a real HTTPS CloudEvents receiver on a fixed loopback port,
// with a certificate from a self-signed CA; it can be taken down and
// brought back on the same address, and can hold requests.
type receiver struct {
	t    *testing.T
	addr string
	cfg  *tls.Config
	ca   *testpki.CA

	mu       sync.Mutex
	srv      *http.Server
	received map[string]int // CloudEvent id -> deliveries
	hold     chan struct{}  // non-nil: requests wait until closed
	badSig   int
}

func newReceiver(t *testing.T) *receiver {
	ca, err := testpki.NewCA()
	require.NoError(t, err)
	cert, _, _, err := ca.Issue("receiver")
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &receiver{t: t, addr: l.Addr().String(), ca: ca, cfg: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, received: map[string]int{}}
	r.serve(l)
	t.Cleanup(r.down)
	return r
}

func (r *receiver) url() string { return "https://" + r.addr + "/events" }

func (r *receiver) serve(l net.Listener) {
	srv := &http.Server{Handler: r, ErrorLog: nil, ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(tls.NewListener(l, r.cfg)) }()
}

func (r *receiver) up() {
	var l net.Listener
	var err error
	require.Eventually(r.t, func() bool {
		l, err = net.Listen("tcp", r.addr)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
	r.serve(l)
}

func (r *receiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if req.Header.Get("Authorization") != "Bearer s3cret" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Header.Get(sink.SignatureHeader) != sink.Sign([]byte("hmac-key"), body) {
		r.badSig++
		w.WriteHeader(http.StatusForbidden)
		return
	}
	var ce struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &ce) != nil || ce.ID == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.received[ce.ID]++
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received[id]
}

func webhookConfig(t *testing.T, r *receiver) {
	secret(t, "hook-token", map[string][]byte{"token": []byte("s3cret")})
	secret(t, "hook-hmac", map[string][]byte{"key": []byte("hmac-key")})
	applyConfig(t, v1alpha1.AIBOMConfigSpec{Sinks: []v1alpha1.Sink{{Name: "events", Webhook: &v1alpha1.WebhookSink{
		URL: r.url(), CABundle: string(r.ca.PEM),
		BearerToken: &v1alpha1.SecretKeyRef{Name: "hook-token", Key: "token"},
		SigningKey:  &v1alpha1.SecretKeyRef{Name: "hook-hmac", Key: "key"},
	}}}, AllowedDestinations: loopbackDestinations})
	waitConfig(t, func(c *v1alpha1.AIBOMConfig) bool {
		return isTrueCond(c.Status.Conditions, "Ready") && isTrueCond(c.Status.Conditions, v1alpha1.SinkConditionPrefix+"events")
	})
}

func isTrueCond(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// synced waits until the AIBOM's current document is delivered (Synced
// True, SinkFailed False) and returns its document hash.
func synced(t *testing.T, key client.ObjectKey) string {
	t.Helper()
	var sha string
	require.Eventually(t, func() bool {
		a, ok := getAIBOM(key)
		if !ok || !isSynced(a) {
			return false
		}
		sha = a.Status.DocumentSHA256
		return true
	}, eventually, tick, "AIBOM %s never synced", key)
	return sha
}

// isSynced says whether the AIBOM's one sink holds its current document.
func isSynced(a *v1alpha1.AIBOM) bool {
	if !isTrue(condition(a, v1alpha1.ConditionSynced)) || isTrue(condition(a, v1alpha1.ConditionSinkFailed)) {
		return false
	}
	return len(a.Status.Sinks) == 1 && a.Status.Sinks[0].State == v1alpha1.DeliveryDelivered && a.Status.Sinks[0].DocumentSHA256 == a.Status.DocumentSHA256
}

func TestWebhookDeliversAndSurvivesAnOutageAndARestart(t *testing.T) {
	r := newReceiver(t)
	c := startController(t, fastDelivery())
	webhookConfig(t, r)
	ns := env.NewNamespace(t, "hook", true)
	names := []string{"a", "b"}
	for _, n := range names {
		env.MustApply(t, ns, harness.DeploymentChain(n, harness.SHA256Hex(n)))
	}
	for _, n := range names {
		sha := synced(t, harness.AIBOMKey(ns, deploymentGK, n))
		require.GreaterOrEqual(t, r.count(sha), 1, "the event id is the document hash")
	}

	// The receiver goes down; new documents fail, and the AIBOMs say so.
	r.down()
	before := harness.MetricValue("aibom_sink_failures_total", map[string]string{"sink": "events", "reason": "Unreachable"})
	names = append(names, "c", "d")
	for _, n := range names[2:] {
		env.MustApply(t, ns, harness.DeploymentChain(n, harness.SHA256Hex(n)))
	}
	for _, n := range names[2:] {
		require.Eventually(t, func() bool {
			a, ok := getAIBOM(harness.AIBOMKey(ns, deploymentGK, n))
			if !ok {
				return false
			}
			f, s := condition(a, v1alpha1.ConditionSinkFailed), condition(a, v1alpha1.ConditionSynced)
			return isTrue(f) && f.Reason == v1alpha1.ReasonDeliveryFailed && s != nil && s.Status == metav1.ConditionFalse &&
				len(a.Status.Sinks) == 1 && a.Status.Sinks[0].State == v1alpha1.DeliveryFailed && a.Status.Sinks[0].Reason == "Unreachable"
		}, eventually, tick)
	}
	require.Greater(t, harness.MetricValue("aibom_sink_failures_total", map[string]string{"sink": "events", "reason": "Unreachable"}), before)

	// Back up: deliveries resume, none lost, conditions recover.
	r.up()
	for _, n := range names {
		sha := synced(t, harness.AIBOMKey(ns, deploymentGK, n))
		require.GreaterOrEqual(t, r.count(sha), 1, "%s delivered", n)
	}

	// A failed delivery is retried after a restart: the failure is in the
	// AIBOM's status, not only in the stopped process.
	r.down()
	env.MustApply(t, ns, harness.DeploymentChain("e", harness.SHA256Hex("e")))
	eKey := harness.AIBOMKey(ns, deploymentGK, "e")
	require.Eventually(t, func() bool {
		a, ok := getAIBOM(eKey)
		return ok && isTrue(condition(a, v1alpha1.ConditionSinkFailed))
	}, eventually, tick)
	sent := map[string]int{}
	for _, n := range names {
		a, _ := getAIBOM(harness.AIBOMKey(ns, deploymentGK, n))
		sent[a.Status.DocumentSHA256] = r.count(a.Status.DocumentSHA256)
	}
	require.NoError(t, c.Stop())
	r.up()
	startController(t, fastDelivery())
	sha := synced(t, eKey)
	require.GreaterOrEqual(t, r.count(sha), 1)
	// The receipts in status.sinks were written by the stopped process: the
	// new one cannot tell them from forged ones (anyone with update on
	// aiboms/status can write them), so each document is sent once more.
	for doc, k := range sent {
		require.Eventually(t, func() bool { return r.count(doc) > k }, eventually, tick, "document %s sent again after the restart", doc)
	}
	for _, n := range names {
		synced(t, harness.AIBOMKey(ns, deploymentGK, n))
	}

	// At least once, not more than a handful of times: an unchanged
	// document is not sent again by later reconciles.
	delivered := map[string]int{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		a, _ := getAIBOM(harness.AIBOMKey(ns, deploymentGK, n))
		delivered[n] = r.count(a.Status.DocumentSHA256)
	}
	time.Sleep(time.Second) // several redelivery passes (300ms) must send nothing more
	for n, k := range delivered {
		a, _ := getAIBOM(harness.AIBOMKey(ns, deploymentGK, n))
		require.Equal(t, k, r.count(a.Status.DocumentSHA256), "%s sent again while unchanged", n)
	}
	r.mu.Lock()
	require.Zero(t, r.badSig, "every request carried a valid HMAC signature")
	r.mu.Unlock()
}

func TestFullQueueSurfacesAsConditionsAndMetrics(t *testing.T) {
	r := newReceiver(t)
	hold := make(chan struct{})
	r.mu.Lock()
	r.hold = hold
	r.mu.Unlock()
	d := fastDelivery()
	// Two AIBOMs a queue (the one in delivery counts), one worker.
	d.QueueCapacity, d.Workers = 2, 1
	d.AttemptTimeout = time.Minute
	d.MaxElapsed = 2 * time.Minute
	startController(t, d)
	webhookConfig(t, r)
	before := harness.MetricValue("aibom_sink_failures_total", map[string]string{"sink": "events", "reason": v1alpha1.ReasonQueueFull})
	ns := env.NewNamespace(t, "full", true)
	names := []string{"q1", "q2", "q3", "q4"}
	for _, n := range names {
		env.MustApply(t, ns, harness.DeploymentChain(n, harness.SHA256Hex(n)))
	}
	// One in flight (held), one queued: the others are refused, and say so.
	require.Eventually(t, func() bool {
		full := 0
		for _, n := range names {
			if a, ok := getAIBOM(harness.AIBOMKey(ns, deploymentGK, n)); ok {
				if f := condition(a, v1alpha1.ConditionSinkFailed); isTrue(f) && f.Reason == v1alpha1.ReasonQueueFull {
					full++
				}
			}
		}
		return full >= 1
	}, eventually, tick)
	require.Greater(t, harness.MetricValue("aibom_sink_failures_total", map[string]string{"sink": "events", "reason": v1alpha1.ReasonQueueFull}), before)
	require.Equal(t, 1.0, harness.MetricValue("aibom_sink_queue_depth", map[string]string{"sink": "events"}))
	// Released: every document arrives, conditions recover.
	close(hold)
	for _, n := range names {
		sha := synced(t, harness.AIBOMKey(ns, deploymentGK, n))
		require.GreaterOrEqual(t, r.count(sha), 1)
	}
}

// #29: anyone with update on aiboms/status can write status.sinks. A
// Delivered receipt the controller did not see written (forged while the
// sink was failing) does not stop the document from being delivered: the
// next redelivery pass sends it, and the receipt is the real one again.
func TestForgedDeliveryReceiptDoesNotStopDelivery(t *testing.T) {
	r := newReceiver(t)
	startController(t, fastDelivery())
	webhookConfig(t, r)
	r.down()
	ns := env.NewNamespace(t, "forged-receipt", true)
	env.MustApply(t, ns, harness.DeploymentChain("f", harness.SHA256Hex("f")))
	key := harness.AIBOMKey(ns, deploymentGK, "f")
	var a *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		got, ok := getAIBOM(key)
		a = got
		return ok && len(got.Status.Sinks) == 1 && got.Status.Sinks[0].State == v1alpha1.DeliveryFailed
	}, eventually, tick, "the delivery never failed")
	sha := a.Status.DocumentSHA256
	require.Zero(t, r.count(sha))

	forged := a.DeepCopy()
	forged.Status.Sinks[0] = v1alpha1.SinkDelivery{Sink: "events", State: v1alpha1.DeliveryDelivered, DocumentSHA256: sha, Location: "https://evil.example/bom"}
	require.NoError(t, env.Client.Status().Patch(context.Background(), forged, client.MergeFrom(a)))

	r.up()
	require.Eventually(t, func() bool { return r.count(sha) >= 1 }, eventually, tick, "the document was never delivered past the forged receipt")
	require.Eventually(t, func() bool {
		got, ok := getAIBOM(key)
		return ok && len(got.Status.Sinks) == 1 && got.Status.Sinks[0].State == v1alpha1.DeliveryDelivered &&
			got.Status.Sinks[0].Location != "https://evil.example/bom"
	}, eventually, tick, "the receipt is the sink's own again")
}
