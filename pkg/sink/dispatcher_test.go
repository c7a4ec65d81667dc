package sink

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"runtime"
	"strconv"
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
	return Options{QueueCapacity: 3, Workers: 1, AttemptTimeout: time.Second, InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, MaxElapsed: time.Second}
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
	// Delivered once: offering the same document again sends nothing, but
	// reports the same receipt again (the first may not have reached the
	// AIBOM's status).
	before := len(rec.results())
	d.Offer(ev("a", "sha-a"))
	require.Never(t, func() bool { return s.count() > 3 }, 50*time.Millisecond, 5*time.Millisecond)
	again := rec.results()[before:]
	require.Len(t, again, 1)
	require.Equal(t, res, again[0], "the receipt reported again is the delivery's own")
}

// A document that comes back (X, then Y, then X again) while Y is being
// delivered is delivered again after Y: the sink ends up holding X, and the
// last receipt is X's own delivery, not a repeat of the first.
func TestADocumentThatComesBackIsDeliveredAfterTheOneInFlight(t *testing.T) {
	rec := &recorder{}
	s := &scripted{name: "flip", block: make(chan struct{})}
	d := NewDispatcher(fastOptions(), rec, logr.Discard())
	d.SetSinks([]Sink{s})
	start(t, d)
	d.Offer(ev("a", "sha-x"))
	s.block <- struct{}{}
	rec.waitFor(t, func(r Result) bool { return r.State == v1alpha1.DeliveryDelivered && r.SHA256 == "sha-x" })
	d.Offer(ev("a", "sha-y")) // held at the sink
	key := ev("a", "").AIBOM
	require.Eventually(t, func() bool {
		d.mu.Lock()
		l := d.lanes["flip"]
		d.mu.Unlock()
		l.mu.Lock()
		defer l.mu.Unlock()
		it := l.items[key]
		return it != nil && it.index < 0 // being delivered
	}, 5*time.Second, time.Millisecond)
	d.Offer(ev("a", "sha-x"))
	release := func(what string) {
		t.Helper()
		select {
		case s.block <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatalf("no delivery of %s reached the sink", what)
		}
	}
	release("y")
	release("x again")
	rec.waitFor(t, func(r Result) bool { return r.State == v1alpha1.DeliveryDelivered && r.SHA256 == "sha-y" })
	require.Eventually(t, func() bool { return s.count() == 3 }, 5*time.Second, time.Millisecond)
	s.mu.Lock()
	last := s.calls[len(s.calls)-1].SHA256
	s.mu.Unlock()
	require.Equal(t, "sha-x", last, "the sink holds the latest document")
	got := rec.results()
	require.Equal(t, "sha-x", got[len(got)-1].SHA256)
	require.Equal(t, 3, countDelivered(got), "each delivery reported once, none repeated")
}

func countDelivered(rs []Result) int {
	n := 0
	for _, r := range rs {
		if r.State == v1alpha1.DeliveryDelivered {
			n++
		}
	}
	return n
}

func TestPermanentFailureIsNotRetried(t *testing.T) {
	rec := &recorder{}
	s := &scripted{name: "perm", script: []error{HTTPStatus(400)}}
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
		return len(l.items) == 1 && len(l.due) == 0
	}, 5*time.Second, time.Millisecond)
	for _, n := range []string{"b", "c"} {
		d.Offer(ev(n, "1"))
	}
	require.Equal(t, 2.0, testutil.ToFloat64(queueDepth.WithLabelValues("full")))
	// A newer document of a queued AIBOM replaces it: no capacity used.
	d.Offer(ev("b", "2"))
	require.Equal(t, 2.0, testutil.ToFloat64(queueDepth.WithLabelValues("full")))
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
	rec.waitFor(t, func(r Result) bool { return r.AIBOM.Name == "c" && r.State == v1alpha1.DeliveryDelivered })
	// b was delivered in its newer version only.
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.calls {
		if c.AIBOM.Name == "b" {
			require.Equal(t, "2", c.SHA256)
		}
	}
}

// stubborn is a Sink that fails one AIBOM's events forever (transiently,
// or by hanging until the attempt's deadline, like an unreachable
// registry) and delivers every other.
type stubborn struct {
	name, bad string
	hang      bool
	mu        sync.Mutex
	badCalls  int
}

func (s *stubborn) Name() string { return s.name }

func (s *stubborn) Deliver(ctx context.Context, ev Event) (Receipt, error) {
	if ev.AIBOM.Name != s.bad {
		return Receipt{Location: "ok"}, nil
	}
	s.mu.Lock()
	s.badCalls++
	s.mu.Unlock()
	if s.hang {
		<-ctx.Done()
		return Receipt{}, ctx.Err()
	}
	return Receipt{}, &StatusError{Code: 503}
}

func TestADocumentThatFailsForeverDelaysNoOther(t *testing.T) {
	for _, hang := range []bool{false, true} {
		t.Run(map[bool]string{false: "failing", true: "hanging"}[hang], func(t *testing.T) {
			rec := &recorder{}
			s := &stubborn{name: "stubborn-" + strconv.FormatBool(hang), bad: "bad", hang: hang}
			// The defaults' shape: a long budget, so that the bad document
			// keeps being retried for the whole test.
			o := Options{QueueCapacity: 100, AttemptTimeout: 30 * time.Second, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, MaxElapsed: time.Hour}
			d := NewDispatcher(o, rec, logr.Discard())
			d.SetSinks([]Sink{s})
			start(t, d)
			d.Offer(ev("bad", "sha-bad"))
			if !hang {
				rec.waitFor(t, func(r Result) bool { return r.AIBOM.Name == "bad" && r.Attempts >= 3 })
			}
			for i := range 50 {
				d.Offer(ev("good-"+strconv.Itoa(i), "sha-"+strconv.Itoa(i)))
			}
			for i := range 50 {
				rec.waitFor(t, func(r Result) bool {
					return r.AIBOM.Name == "good-"+strconv.Itoa(i) && r.State == v1alpha1.DeliveryDelivered
				})
			}
			for _, r := range rec.results() {
				require.False(t, r.AIBOM.Name == "bad" && r.State != v1alpha1.DeliveryPending, "the bad document is still retried: %+v", r)
			}
		})
	}
}

func TestEveryFailedAttemptIsReportedWithItsNextAttempt(t *testing.T) {
	rec := &recorder{}
	s := &stubborn{name: "attempts", bad: "a"}
	o := fastOptions()
	o.MaxElapsed = time.Hour
	d := NewDispatcher(o, rec, logr.Discard())
	d.SetSinks([]Sink{s})
	start(t, d)
	d.Offer(ev("a", "sha-a"))
	rec.waitFor(t, func(r Result) bool { return r.Attempts >= 6 })
	var n int
	for _, r := range rec.results() {
		n++
		require.Equal(t, n, r.Attempts, "one report per attempt, counted")
		require.Equal(t, v1alpha1.DeliveryPending, r.State)
		require.Equal(t, "HTTP503", r.Reason)
		require.False(t, r.NextAttempt.Before(r.At), "the next attempt is after the report")
		require.Contains(t, r.Message, "attempt "+strconv.Itoa(n)+" failed")
	}
}

// bigDoc is a document of size bytes whose hash is its name.
func bigDoc(i, size int) Event {
	doc := make([]byte, size)
	for j := range doc {
		doc[j] = byte('a' + (i+j)%26)
	}
	sum := sha256.Sum256(doc)
	e := ev("big-"+strconv.Itoa(i), hex.EncodeToString(sum[:]))
	e.Document = doc
	e.Reloadable = true
	return e
}

func TestTheQueuesHoldNoMoreBytesThanTheirBudget(t *testing.T) {
	const budget = 4 << 20
	const size = 256 << 10
	rec := &recorder{}
	stalled := &scripted{name: "stalled", block: make(chan struct{})}
	other := &scripted{name: "stalled-too", block: make(chan struct{})}
	docs := map[string][]byte{}
	var mu sync.Mutex
	loads := 0
	o := Options{QueueCapacity: 10000, QueueBytes: budget, Workers: 1, AttemptTimeout: time.Minute, MaxElapsed: time.Hour,
		Load: func(_ context.Context, key types.NamespacedName, sha string) ([]byte, error) {
			mu.Lock()
			defer mu.Unlock()
			loads++
			doc, ok := docs[key.Name]
			if !ok {
				return nil, ErrDocumentChanged
			}
			return doc, nil
		}}
	d := NewDispatcher(o, rec, logr.Discard())
	d.SetSinks([]Sink{stalled, other})
	start(t, d)
	for i := range 200 { // 50 MiB of documents, to two stalled sinks
		e := bigDoc(i, size)
		mu.Lock()
		docs[e.AIBOM.Name] = e.Document
		mu.Unlock()
		d.Offer(e)
		require.LessOrEqual(t, d.HeldBytes(), int64(budget))
	}
	require.Equal(t, float64(d.HeldBytes()), testutil.ToFloat64(queueBytes))
	require.Greater(t, d.HeldBytes(), int64(budget-size), "the budget is used, once for both sinks")
	// Over the budget, reloadable documents wait as references: nothing is
	// refused, and they are read again when their turn comes.
	for _, r := range rec.results() {
		require.NotEqual(t, v1alpha1.ReasonQueueFull, r.Reason)
	}
	close(stalled.block)
	close(other.block)
	for _, name := range []string{"stalled", "stalled-too"} {
		rec.waitFor(t, func(r Result) bool {
			return r.Sink == name && r.AIBOM.Name == "big-199" && r.State == v1alpha1.DeliveryDelivered
		})
	}
	require.Eventually(t, func() bool { return d.HeldBytes() == 0 }, 10*time.Second, 5*time.Millisecond)
	mu.Lock()
	require.Greater(t, loads, 0)
	mu.Unlock()
	for _, c := range stalled.calls {
		sum := sha256.Sum256(c.Document)
		require.Equal(t, c.SHA256, hex.EncodeToString(sum[:]), "a reloaded document is the one offered")
	}
}

func TestOverTheByteBudgetAnEventThatCannotBeReloadedIsRefused(t *testing.T) {
	rec := &recorder{}
	stalled := &scripted{name: "budget", block: make(chan struct{})}
	t.Cleanup(func() { close(stalled.block) })
	d := NewDispatcher(Options{QueueBytes: 1 << 20, Workers: 1}, rec, logr.Discard())
	d.SetSinks([]Sink{stalled})
	start(t, d)
	before := testutil.ToFloat64(failures.WithLabelValues("budget", v1alpha1.ReasonQueueFull))
	for i := range 8 {
		e := bigDoc(i, 256<<10)
		e.Reloadable = false // over the inline cap: only the offer has it
		d.Offer(e)
	}
	require.LessOrEqual(t, d.HeldBytes(), int64(1<<20))
	res := rec.waitFor(t, func(r Result) bool { return r.Reason == v1alpha1.ReasonQueueFull })
	require.Equal(t, v1alpha1.DeliveryFailed, res.State)
	require.Contains(t, res.Message, "--sink-queue-bytes")
	require.Equal(t, before+4, testutil.ToFloat64(failures.WithLabelValues("budget", v1alpha1.ReasonQueueFull)))
}

// BenchmarkQueueUnderAStalledSink offers big documents of distinct AIBOMs
// to a sink that never answers and reports the bytes the queues hold and
// the heap after a GC: both stay at the budget however many are offered.
func BenchmarkQueueUnderAStalledSink(b *testing.B) {
	const size = 1 << 20
	const budget = 16 << 20
	stalled := &scripted{name: "bench", block: make(chan struct{})}
	defer close(stalled.block)
	d := NewDispatcher(Options{QueueCapacity: 1 << 20, QueueBytes: budget, Workers: 1, AttemptTimeout: time.Hour,
		Load: func(context.Context, types.NamespacedName, string) ([]byte, error) { return nil, ErrDocumentChanged }}, nil, logr.Discard())
	d.SetSinks([]Sink{stalled})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = d.Start(ctx) }()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Offer(bigDoc(i, size))
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(b.N)*size, "offered-bytes")
	b.ReportMetric(float64(d.HeldBytes()), "held-bytes")
	b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(base)), "heap-growth-bytes")
}

// registries is a Partitioned sink: events whose image is on "down.example"
// hang until the attempt's deadline, like a registry that does not answer.
type registries struct {
	mu      sync.Mutex
	running map[string]int
	maxDown int
}

func (r *registries) Name() string { return "registries" }

func (r *registries) Partitions(ev Event) []string { return (&OCI{}).Partitions(ev) }

func (r *registries) Deliver(ctx context.Context, ev Event) (Receipt, error) {
	reg := r.Partitions(ev)[0]
	r.mu.Lock()
	r.running[reg]++
	r.maxDown = max(r.maxDown, r.running["down.example"])
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.running[reg]--
		r.mu.Unlock()
	}()
	if reg == "down.example" {
		<-ctx.Done()
		return Receipt{}, ctx.Err()
	}
	return Receipt{Location: reg}, nil
}

func TestARegistryThatDoesNotAnswerHoldsOneWorkerOnly(t *testing.T) {
	rec := &recorder{}
	s := &registries{running: map[string]int{}}
	o := Options{Workers: 4, AttemptTimeout: time.Minute, InitialBackoff: time.Millisecond, MaxElapsed: time.Hour}
	d := NewDispatcher(o, rec, logr.Discard())
	d.SetSinks([]Sink{s})
	start(t, d)
	// More documents on the dead registry than there are workers, first.
	for i := range 8 {
		e := ev("down-"+strconv.Itoa(i), "sha")
		e.Images = []string{"down.example/team/model@sha256:" + strconv.Itoa(i)}
		d.Offer(e)
	}
	for i := range 20 {
		e := ev("up-"+strconv.Itoa(i), "sha")
		e.Images = []string{"up.example/team/model@sha256:" + strconv.Itoa(i)}
		d.Offer(e)
	}
	for i := range 20 {
		rec.waitFor(t, func(r Result) bool {
			return r.AIBOM.Name == "up-"+strconv.Itoa(i) && r.State == v1alpha1.DeliveryDelivered
		})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Equal(t, 1, s.maxDown, "one attempt at a time on the registry that hangs")
}
