package sink

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// recorder is a Reporter that keeps every result.
type recorder struct {
	mu  sync.Mutex
	got []Result
}

func (r *recorder) Report(res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, res)
}

func (r *recorder) results() []Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Result(nil), r.got...)
}

func (r *recorder) waitFor(t *testing.T, pred func(Result) bool) Result {
	t.Helper()
	var found Result
	require.Eventually(t, func() bool {
		for _, res := range r.results() {
			if pred(res) {
				found = res
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	return found
}

// scripted is a Sink whose attempts fail with the errors of a script, then
// succeed; block, when set, holds every attempt until closed.
type scripted struct {
	name   string
	mu     sync.Mutex
	script []error
	calls  []Event
	block  chan struct{}
}

func (s *scripted) Name() string { return s.name }

func (s *scripted) Deliver(ctx context.Context, ev Event) (Receipt, error) {
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return Receipt{}, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, ev)
	if len(s.script) > 0 {
		err := s.script[0]
		s.script = s.script[1:]
		if err != nil {
			return Receipt{}, err
		}
	}
	return Receipt{Location: "loc/" + ev.SHA256}, nil
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

func fastOptions() Options {
	return Options{QueueCapacity: 3, AttemptTimeout: time.Second, InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, MaxElapsed: time.Second}
}

func start(t *testing.T, d *Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = d.Start(ctx) }()
}

func ev(name, sha string) Event {
	return Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: "ns", Name: name}, Subject: Subject{Kind: "Deployment", Name: name, UID: "u-" + name}, Document: []byte(`{}`), SHA256: sha}
}

func TestTransientFailuresAreRetriedThenDelivered(t *testing.T) {
	rec := &recorder{}
	s := &scripted{name: "retry", script: []error{errors.New("connection refused"), &StatusError{Code: 503}}}
	d := NewDispatcher(fastOptions(), rec, logr.Discard())
	d.SetSinks([]Sink{s})
	start(t, d)
	d.Offer(ev("a", "sha-a"))
	res := rec.waitFor(t, func(r Result) bool { return r.State == v1alpha1.DeliveryDelivered })
	require.Equal(t, 3, res.Attempts)
	require.Equal(t, "loc/sha-a", res.Location)
	// The first failure was reported as pending with its reason.
	require.Equal(t, v1alpha1.DeliveryPending, rec.results()[0].State)
	require.Equal(t, "Unreachable", rec.results()[0].Reason)
	// Delivered once: offering the same document again sends nothing.
	d.Offer(ev("a", "sha-a"))
	require.Never(t, func() bool { return s.count() > 3 }, 50*time.Millisecond, 5*time.Millisecond)
}

func TestPermanentFailureIsNotRetried(t *testing.T) {
	rec := &recorder{}
	s := &scripted{name: "perm", script: []error{HTTPStatus(400, "bad")}}
	d := NewDispatcher(fastOptions(), rec, logr.Discard())
	d.SetSinks([]Sink{s})
	start(t, d)
	d.Offer(ev("a", "sha-a"))
	res := rec.waitFor(t, func(r Result) bool { return r.State == v1alpha1.DeliveryFailed })
	require.Equal(t, "Rejected", res.Reason)
	require.Equal(t, 1, res.Attempts)
	require.Equal(t, 1, s.count())
}

func TestRetriesStopAtMaxElapsed(t *testing.T) {
	rec := &recorder{}
	script := make([]error, 1000)
	for i := range script {
		script[i] = &StatusError{Code: 502}
	}
	s := &scripted{name: "down", script: script}
	o := fastOptions()
	o.MaxElapsed = 50 * time.Millisecond
	d := NewDispatcher(o, rec, logr.Discard())
	d.SetSinks([]Sink{s})
	start(t, d)
	d.Offer(ev("a", "sha-a"))
	res := rec.waitFor(t, func(r Result) bool { return r.State == v1alpha1.DeliveryFailed })
	require.Equal(t, "HTTP502", res.Reason)
	require.Greater(t, res.Attempts, 1)
	require.Contains(t, res.Message, "retries exhausted")
	// Backoff is capped: many attempts fit into the budget, but not more
	// than the budget divided by the initial backoff.
	require.LessOrEqual(t, res.Attempts, 51)
}

func TestFullQueueRefusesAndReportsWithoutBlocking(t *testing.T) {
	rec := &recorder{}
	s := &scripted{name: "full", block: make(chan struct{})}
	d := NewDispatcher(fastOptions(), rec, logr.Discard())
	d.SetSinks([]Sink{s})
	start(t, d)
	before := testutil.ToFloat64(failures.WithLabelValues("full", v1alpha1.ReasonQueueFull))
	d.Offer(ev("a", "1")) // taken by the worker, blocked in Deliver
	l := d.lanes["full"]
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.inflight != nil && len(l.pending) == 0
	}, 5*time.Second, time.Millisecond)
	for _, n := range []string{"b", "c", "d"} {
		d.Offer(ev(n, "1"))
	}
	require.Equal(t, 3.0, testutil.ToFloat64(queueDepth.WithLabelValues("full")))
	// A newer document of a queued AIBOM replaces it: no capacity used.
	d.Offer(ev("b", "2"))
	require.Equal(t, 3.0, testutil.ToFloat64(queueDepth.WithLabelValues("full")))
	done := make(chan struct{})
	go func() { d.Offer(ev("e", "1")); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Offer blocked on a full queue")
	}
	res := rec.waitFor(t, func(r Result) bool { return r.AIBOM.Name == "e" })
	require.Equal(t, v1alpha1.DeliveryFailed, res.State)
	require.Equal(t, v1alpha1.ReasonQueueFull, res.Reason)
	require.Equal(t, before+1, testutil.ToFloat64(failures.WithLabelValues("full", v1alpha1.ReasonQueueFull)))
	close(s.block)
	rec.waitFor(t, func(r Result) bool { return r.AIBOM.Name == "d" && r.State == v1alpha1.DeliveryDelivered })
	// b was delivered in its newer version only.
	for _, c := range s.calls {
		if c.AIBOM.Name == "b" {
			require.Equal(t, "2", c.SHA256)
		}
	}
}
