package sink

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// Defaults of Options.
const (
	DefaultQueueCapacity  = 1000
	DefaultAttemptTimeout = 15 * time.Second
	DefaultInitialBackoff = time.Second
	DefaultMaxBackoff     = time.Minute
	DefaultMaxElapsed     = 10 * time.Minute
)

// Options tune the delivery guarantees (docs/sinks.md).
type Options struct {
	// QueueCapacity bounds each sink's queue, in AIBOMs: a queue holds at
	// most one event per AIBOM (a newer one replaces the one waiting), and
	// an event for another AIBOM offered to a full queue is refused, counted
	// and reported as failed with reason QueueFull (it is delivered again by
	// the next redelivery pass). Offering never blocks.
	QueueCapacity int
	// AttemptTimeout is the deadline of one delivery attempt.
	AttemptTimeout time.Duration
	// InitialBackoff and MaxBackoff bound the wait after a transient
	// failure: InitialBackoff, doubling per consecutive failure of the
	// sink, at most MaxBackoff.
	InitialBackoff, MaxBackoff time.Duration
	// MaxElapsed is how long an event is retried, counted from when it was
	// queued; then it is reported failed (and delivered again later).
	MaxElapsed time.Duration
}

func (o Options) withDefaults() Options {
	if o.QueueCapacity <= 0 {
		o.QueueCapacity = DefaultQueueCapacity
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = DefaultInitialBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxBackoff < o.InitialBackoff {
		o.MaxBackoff = o.InitialBackoff
	}
	if o.MaxElapsed <= 0 {
		o.MaxElapsed = DefaultMaxElapsed
	}
	return o
}

// Result is the outcome of one event at one sink.
type Result struct {
	Sink string
	// Op, AIBOM, Subject and SHA256 are the event's.
	Op      Op
	AIBOM   types.NamespacedName
	Subject Subject
	SHA256  string
	Size    int
	// State is v1alpha1.DeliveryDelivered, DeliveryFailed, or
	// DeliveryPending (an attempt failed, retrying).
	State    string
	Location string
	// Reason and Message explain a failure.
	Reason, Message string
	Attempts        int
	At              time.Time
}

// Reporter receives every Result. Report must not block (the status
// writer queues it).
type Reporter interface {
	Report(Result)
}

// Dispatcher delivers events to the configured sinks (see Options). It is a
// manager Runnable; events offered before it starts wait in their queues.
type Dispatcher struct {
	opts     Options
	reporter Reporter
	log      logr.Logger
	now      func() time.Time

	mu    sync.Mutex
	lanes map[string]*lane
	ctx   context.Context // set by Start
}

// NewDispatcher returns a dispatcher with no sinks.
func NewDispatcher(opts Options, reporter Reporter, log logr.Logger) *Dispatcher {
	return &Dispatcher{opts: opts.withDefaults(), reporter: reporter, log: log, now: time.Now, lanes: map[string]*lane{}}
}

// Start runs the sinks' workers until ctx ends.
func (d *Dispatcher) Start(ctx context.Context) error {
	d.mu.Lock()
	d.ctx = ctx
	for _, l := range d.lanes {
		l.start(ctx)
	}
	d.mu.Unlock()
	<-ctx.Done()
	return nil
}

// SetSinks replaces the sinks. A sink whose name stays keeps its queue and
// what it delivered (the new settings apply from its next attempt); a sink
// removed drops its queue (the AIBOMs' statuses then no longer list it).
func (d *Dispatcher) SetSinks(sinks []Sink) {
	d.mu.Lock()
	defer d.mu.Unlock()
	keep := map[string]bool{}
	for _, s := range sinks {
		keep[s.Name()] = true
		if l, ok := d.lanes[s.Name()]; ok {
			l.setSink(s)
			continue
		}
		l := newLane(d, s)
		d.lanes[s.Name()] = l
		if d.ctx != nil {
			l.start(d.ctx)
		}
	}
	for name, l := range d.lanes {
		if !keep[name] {
			l.stop()
			delete(d.lanes, name)
			queueDepth.DeleteLabelValues(name)
		}
	}
}

// Names returns the configured sinks' names, sorted.
func (d *Dispatcher) Names() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.lanes))
	for n := range d.lanes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Offer hands an event to every sink. It never blocks: an event a sink
// already holds (queued, being delivered, or delivered by this process) is
// not queued twice; a newer event replaces the waiting one of the same
// AIBOM; a full queue refuses the event and reports it (QueueFull).
func (d *Dispatcher) Offer(ev Event) {
	ev.queued = d.now()
	d.mu.Lock()
	lanes := make([]*lane, 0, len(d.lanes))
	for _, l := range d.lanes {
		lanes = append(lanes, l)
	}
	d.mu.Unlock()
	for _, l := range lanes {
		l.offer(ev)
	}
}

// OfferTo hands an event to one sink only (a redelivery to the sinks that
// have not got the document); unknown names are ignored.
func (d *Dispatcher) OfferTo(names []string, ev Event) {
	ev.queued = d.now()
	d.mu.Lock()
	var lanes []*lane
	for _, n := range names {
		if l, ok := d.lanes[n]; ok {
			lanes = append(lanes, l)
		}
	}
	d.mu.Unlock()
	for _, l := range lanes {
		l.offer(ev)
	}
}

func (d *Dispatcher) report(r Result) {
	if d.reporter != nil {
		d.reporter.Report(r)
	}
}

// lane is one sink's queue and worker.
type lane struct {
	d    *Dispatcher
	name string

	mu        sync.Mutex
	sink      Sink
	pending   map[types.NamespacedName]*Event
	order     []types.NamespacedName
	inflight  *Event
	delivered map[types.NamespacedName]string // AIBOM -> SHA-256 this process delivered
	wake      chan struct{}
	cancel    context.CancelFunc
	streak    int // consecutive failed attempts
}

func newLane(d *Dispatcher, s Sink) *lane {
	queueDepth.WithLabelValues(s.Name()).Set(0)
	return &lane{d: d, name: s.Name(), sink: s, pending: map[types.NamespacedName]*Event{},
		delivered: map[types.NamespacedName]string{}, wake: make(chan struct{}, 1)}
}

func (l *lane) setSink(s Sink) {
	l.mu.Lock()
	l.sink = s
	l.mu.Unlock()
}

func (l *lane) start(ctx context.Context) {
	l.mu.Lock()
	if l.cancel != nil {
		l.mu.Unlock()
		return
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.mu.Unlock()
	go l.run(ctx)
}

func (l *lane) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil {
		l.cancel()
	}
}

func same(a, b *Event) bool { return a != nil && b != nil && a.Op == b.Op && a.SHA256 == b.SHA256 }

func (l *lane) offer(ev Event) {
	l.mu.Lock()
	key := ev.AIBOM
	if ev.Op == OpWrite && l.delivered[key] == ev.SHA256 && ev.SHA256 != "" {
		l.mu.Unlock()
		return
	}
	if ev.Op == OpDelete {
		delete(l.delivered, key)
	}
	if l.inflight != nil && l.inflight.AIBOM == key && same(l.inflight, &ev) {
		l.mu.Unlock()
		return
	}
	if old, ok := l.pending[key]; ok {
		if !same(old, &ev) {
			l.pending[key] = &ev // a newer event supersedes the waiting one
		}
		l.mu.Unlock()
		return
	}
	if len(l.pending) >= l.d.opts.QueueCapacity {
		l.mu.Unlock()
		failures.WithLabelValues(l.name, v1alpha1.ReasonQueueFull).Inc()
		l.d.log.Info("sink queue full; event refused, to be delivered again later", "sink", l.name, "aibom", key.String(), "capacity", l.d.opts.QueueCapacity)
		l.d.report(l.result(&ev, v1alpha1.DeliveryFailed, "", v1alpha1.ReasonQueueFull,
			"the sink's queue is full (capacity "+strconv.Itoa(l.d.opts.QueueCapacity)+"); the document is delivered again by a later redelivery pass", 0))
		return
	}
	l.pending[key] = &ev
	l.order = append(l.order, key)
	queueDepth.WithLabelValues(l.name).Set(float64(len(l.pending)))
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest waiting event, waiting for one.
func (l *lane) next(ctx context.Context) *Event {
	for {
		l.mu.Lock()
		for len(l.order) > 0 {
			key := l.order[0]
			l.order = l.order[1:]
			if ev, ok := l.pending[key]; ok {
				delete(l.pending, key)
				l.inflight = ev
				queueDepth.WithLabelValues(l.name).Set(float64(len(l.pending)))
				l.mu.Unlock()
				return ev
			}
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-l.wake:
		}
	}
}

func (l *lane) run(ctx context.Context) {
	for {
		ev := l.next(ctx)
		if ev == nil {
			return
		}
		l.deliver(ctx, ev)
		l.mu.Lock()
		l.inflight = nil
		l.mu.Unlock()
	}
}

func (l *lane) backoff() time.Duration {
	o := l.d.opts
	b := o.InitialBackoff
	for i := 1; i < l.streak && b < o.MaxBackoff; i++ {
		b *= 2
	}
	return min(b, o.MaxBackoff)
}

// superseded reports whether a newer event of the same AIBOM waits.
func (l *lane) superseded(ev *Event) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.pending[ev.AIBOM]
	return ok
}

func (l *lane) deliver(ctx context.Context, ev *Event) {
	o := l.d.opts
	for n := 1; ; n++ {
		if l.streak > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(l.backoff()):
			}
		}
		if l.superseded(ev) {
			return // the newer event is delivered instead
		}
		l.mu.Lock()
		s := l.sink
		l.mu.Unlock()
		actx, cancel := context.WithTimeout(ctx, o.AttemptTimeout)
		start := time.Now()
		rec, err := s.Deliver(actx, *ev)
		cancel()
		latency.WithLabelValues(l.name).Observe(time.Since(start).Seconds())
		if err == nil {
			attempts.WithLabelValues(l.name, "ok").Inc()
			deliveries.WithLabelValues(l.name, string(ev.Op)).Inc()
			l.streak = 0
			if ev.Op == OpWrite {
				l.mu.Lock()
				l.delivered[ev.AIBOM] = ev.SHA256
				l.mu.Unlock()
			}
			l.d.report(l.result(ev, v1alpha1.DeliveryDelivered, rec.Location, "", "", n))
			return
		}
		if ctx.Err() != nil {
			// Stopping (or the sink removed): the status still says Pending,
			// and the next leader delivers it again.
			return
		}
		l.streak++
		reason, msg := reasonOf(err), err.Error()
		if IsPermanent(err) {
			attempts.WithLabelValues(l.name, "permanent").Inc()
			failures.WithLabelValues(l.name, reason).Inc()
			l.d.log.Info("sink refused an event", "sink", l.name, "aibom", ev.AIBOM.String(), "op", ev.Op, "reason", reason, "error", msg)
			l.d.report(l.result(ev, v1alpha1.DeliveryFailed, "", reason, msg, n))
			return
		}
		attempts.WithLabelValues(l.name, "transient").Inc()
		if l.d.now().Sub(ev.queued)+l.backoff() > o.MaxElapsed {
			failures.WithLabelValues(l.name, reason).Inc()
			l.d.log.Info("sink delivery failed; retries exhausted, to be delivered again later", "sink", l.name, "aibom", ev.AIBOM.String(), "attempts", n, "reason", reason, "error", msg)
			l.d.report(l.result(ev, v1alpha1.DeliveryFailed, "", reason, "retries exhausted after "+strconv.Itoa(n)+" attempts: "+msg, n))
			return
		}
		if n == 1 {
			l.d.report(l.result(ev, v1alpha1.DeliveryPending, "", reason, "attempt failed, retrying: "+msg, n))
		}
	}
}

func (l *lane) result(ev *Event, state, location, reason, msg string, n int) Result {
	return Result{Sink: l.name, Op: ev.Op, AIBOM: ev.AIBOM, Subject: ev.Subject, SHA256: ev.SHA256, Size: len(ev.Document),
		State: state, Location: location, Reason: reason, Message: msg, Attempts: n, At: l.d.now()}
}
