package sink

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// Defaults of Options.
const (
	DefaultQueueCapacity  = 1000
	DefaultQueueBytes     = 64 << 20
	DefaultWorkers        = 4
	DefaultAttemptTimeout = 15 * time.Second
	DefaultInitialBackoff = time.Second
	DefaultMaxBackoff     = time.Minute
	DefaultMaxElapsed     = 10 * time.Minute
)

// Options tune the delivery guarantees (docs/sinks.md).
type Options struct {
	// QueueCapacity bounds each sink's queue, in AIBOMs (waiting, waiting
	// for their next attempt, or being delivered): a queue holds at most
	// one event per AIBOM (a newer one replaces the one waiting), and
	// an event for another AIBOM offered to a full queue is refused, counted
	// and reported as failed with reason QueueFull (it is delivered again by
	// the next redelivery pass). Offering never blocks.
	QueueCapacity int
	// QueueBytes bounds the bytes of the documents the queues hold, all
	// sinks together (a document queued for several sinks counts once).
	// Past it, an event whose document can be read again from its AIBOM
	// (Event.Reloadable) is queued as a reference and read when its turn
	// comes; any other is refused like at a full queue (QueueFull).
	QueueBytes int64
	// Workers is how many deliveries of one sink run at once. Each event
	// has its own retry schedule: an event that keeps failing waits for its
	// next attempt without holding a worker, so it never delays another.
	Workers int
	// AttemptTimeout is the deadline of one delivery attempt.
	AttemptTimeout time.Duration
	// InitialBackoff and MaxBackoff bound the wait after a transient
	// failure of an event: InitialBackoff, doubling per consecutive failed
	// attempt of that event, at most MaxBackoff.
	InitialBackoff, MaxBackoff time.Duration
	// MaxElapsed is how long an event is retried, counted from when it was
	// queued; then it is reported failed (and delivered again later).
	MaxElapsed time.Duration
	// Load reads an AIBOM's current document again for an event queued as
	// a reference; it returns ErrDocumentChanged when the AIBOM no longer
	// holds the document of that SHA-256. Without it, events over the byte
	// budget are refused.
	Load func(ctx context.Context, aibom types.NamespacedName, sha256 string) ([]byte, error)
}

// ErrDocumentChanged is returned by Options.Load when the AIBOM holds
// another document (or none): the event is dropped, a newer one follows.
var ErrDocumentChanged = errors.New("the AIBOM no longer holds this document")

func (o Options) withDefaults() Options {
	if o.QueueCapacity <= 0 {
		o.QueueCapacity = DefaultQueueCapacity
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
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
	// DeliveryPending (an attempt failed, retrying at NextAttempt).
	State    string
	Location string
	// Reason and Message explain a failure; Message holds no part of a sink
	// URL but its origin, and no receiver's reply.
	Reason, Message string
	// Attempts counts the attempts of this event so far.
	Attempts int
	At       time.Time
	// NextAttempt is when a Pending event is tried again.
	NextAttempt time.Time
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

	docs docStore
}

// NewDispatcher returns a dispatcher with no sinks.
func NewDispatcher(opts Options, reporter Reporter, log logr.Logger) *Dispatcher {
	opts = opts.withDefaults()
	return &Dispatcher{opts: opts, reporter: reporter, log: log, now: time.Now, lanes: map[string]*lane{},
		docs: docStore{limit: opts.QueueBytes, held: map[string]*heldDoc{}}}
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

// HeldBytes is the bytes of documents the queues hold (a document queued
// for several sinks counts once).
func (d *Dispatcher) HeldBytes() int64 { return d.docs.bytes() }

// Offer hands an event to every sink. It never blocks: an event a sink
// already holds (queued or being delivered) is not queued twice, and one it
// delivered in this process is not sent again but its Delivered result is
// reported again (the receipt may not have reached the AIBOM's status: the
// reconciler offers a document only when the status shows no delivery); a
// newer event replaces the waiting one of the same AIBOM; a full queue
// refuses the event and reports it (QueueFull).
func (d *Dispatcher) Offer(ev Event) {
	d.OfferTo(d.Names(), ev)
}

// OfferTo hands an event to some sinks only (a redelivery to the sinks
// that have not got the document); unknown names are ignored.
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

// docStore holds the documents of queued events, once per SHA-256 however
// many sinks' queues refer to it, within a byte budget.
type docStore struct {
	limit int64

	mu    sync.Mutex
	total int64
	held  map[string]*heldDoc
}

type heldDoc struct {
	sha  string
	data []byte
	refs int
}

// acquire holds ev's document for one more queue entry; nil when it is
// over the budget.
func (s *docStore) acquire(ev *Event) *heldDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.held[ev.SHA256]; ok {
		h.refs++
		return h
	}
	if s.total+int64(len(ev.Document)) > s.limit {
		return nil
	}
	h := &heldDoc{sha: ev.SHA256, data: ev.Document, refs: 1}
	s.held[ev.SHA256] = h
	s.total += int64(len(ev.Document))
	queueBytes.Set(float64(s.total))
	return h
}

func (s *docStore) release(h *heldDoc) {
	if h == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h.refs--
	if h.refs == 0 {
		delete(s.held, h.sha)
		s.total -= int64(len(h.data))
		queueBytes.Set(float64(s.total))
	}
}

func (s *docStore) bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Partitioned is implemented by sinks whose events go to different
// servers (OCI: the registries of an event's images). The dispatcher runs at
// most one attempt at a time per server, so that a server that hangs until
// the attempt's deadline holds one worker, never all of them.
type Partitioned interface {
	// Partitions names the servers an event's delivery talks to.
	Partitions(ev Event) []string
}

// item is one AIBOM's event in one sink's queue, with its own schedule.
type item struct {
	ev   Event // Document nil: in held, or to be loaded (a reference)
	size int
	held *heldDoc
	// parts are the servers the delivery talks to (Partitioned); holding
	// while its attempt marks them busy.
	parts   []string
	holding bool
	// attempts so far; due is when the next one may start.
	attempts int
	due      time.Time
	// index in the lane's heap; -1 while being delivered.
	index int
	// next is a newer event of the same AIBOM offered during an attempt.
	next *item
}

// schedule is a min-heap of items by due time.
type schedule []*item

func (s schedule) Len() int           { return len(s) }
func (s schedule) Less(i, j int) bool { return s[i].due.Before(s[j].due) }
func (s schedule) Swap(i, j int) {
	s[i], s[j] = s[j], s[i]
	s[i].index, s[j].index = i, j
}
func (s *schedule) Push(x any) {
	it := x.(*item)
	it.index = len(*s)
	*s = append(*s, it)
}
func (s *schedule) Pop() any {
	old := *s
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*s = old[:len(old)-1]
	it.index = -1
	return it
}

// lane is one sink's queue and workers.
type lane struct {
	d    *Dispatcher
	name string

	mu        sync.Mutex
	sink      Sink
	scrub     *Scrubber
	items     map[types.NamespacedName]*item  // queued or being delivered
	due       schedule                        // the queued ones
	delivered map[types.NamespacedName]Result // the last document delivered, per AIBOM
	busy      map[string]bool                 // partitions with an attempt running
	wake      chan struct{}
	cancel    context.CancelFunc
}

func newLane(d *Dispatcher, s Sink) *lane {
	queueDepth.WithLabelValues(s.Name()).Set(0)
	l := &lane{d: d, name: s.Name(), items: map[types.NamespacedName]*item{},
		delivered: map[types.NamespacedName]Result{}, busy: map[string]bool{}, wake: make(chan struct{}, 1)}
	l.setSink(s)
	return l
}

func (l *lane) setSink(s Sink) {
	var sc *Scrubber
	if x, ok := s.(scrubbing); ok {
		sc = x.scrubber()
	}
	l.mu.Lock()
	l.sink, l.scrub = s, sc
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
	for range l.d.opts.Workers {
		go l.run(ctx)
	}
}

func (l *lane) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil {
		l.cancel()
	}
	// Queued items are released here, those being delivered by their
	// worker (finish).
	for _, it := range l.items {
		if it.index >= 0 {
			l.d.docs.release(it.held)
		}
		if it.next != nil {
			l.d.docs.release(it.next.held)
			it.next = nil
		}
	}
	l.items, l.due = map[types.NamespacedName]*item{}, nil
}

func same(a, b *Event) bool { return a.Op == b.Op && a.SHA256 == b.SHA256 }

func (l *lane) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// newItem makes the queue entry of ev: its document held, or a reference
// when over the byte budget and reloadable; nil when neither.
func (l *lane) newItem(ev Event) *item {
	it := &item{ev: ev, size: len(ev.Document), due: ev.queued, index: -1}
	if p, ok := l.sink.(Partitioned); ok {
		it.parts = p.Partitions(ev)
	}
	it.ev.Document = nil
	if ev.Op == OpWrite && len(ev.Document) > 0 {
		it.held = l.d.docs.acquire(&ev)
		if it.held == nil && (!ev.Reloadable || l.d.opts.Load == nil) {
			return nil
		}
	}
	return it
}

func (l *lane) offer(ev Event) {
	key := ev.AIBOM
	l.mu.Lock()
	if done, ok := l.delivered[key]; ok && l.items[key] == nil && ev.Op == OpWrite && ev.SHA256 != "" && done.SHA256 == ev.SHA256 {
		l.mu.Unlock()
		// Delivered already, and no other document of the AIBOM queued or
		// being delivered since: nothing to send, but the receipt again
		// (the status writer may have found no AIBOM to write it into
		// yet). With another document on its way, this one goes after it
		// as any newer event does: the sink ends up holding it.
		l.d.report(done)
		return
	}
	if ev.Op == OpDelete {
		delete(l.delivered, key)
	}
	cur := l.items[key]
	if cur != nil && (same(&cur.ev, &ev) || (cur.next != nil && same(&cur.next.ev, &ev))) {
		l.mu.Unlock()
		return
	}
	if cur == nil && len(l.items) >= l.d.opts.QueueCapacity {
		l.mu.Unlock()
		l.refuse(ev, "the sink's queue is full (capacity "+strconv.Itoa(l.d.opts.QueueCapacity)+" AIBOMs)")
		return
	}
	it := l.newItem(ev)
	if it == nil {
		l.mu.Unlock()
		l.refuse(ev, fmt.Sprintf("the sinks' queues hold their budget of %d bytes of documents (--sink-queue-bytes)", l.d.opts.QueueBytes))
		return
	}
	switch {
	case cur == nil:
		l.items[key] = it
		heap.Push(&l.due, it)
	case cur.index < 0: // being delivered: the newer event follows it
		if cur.next != nil {
			l.d.docs.release(cur.next.held)
		}
		cur.next = it
	default: // a newer event supersedes the waiting one, with a fresh schedule
		l.d.docs.release(cur.held)
		it.index = cur.index
		l.due[cur.index] = it
		l.items[key] = it
		heap.Fix(&l.due, it.index)
	}
	queueDepth.WithLabelValues(l.name).Set(float64(len(l.due)))
	l.mu.Unlock()
	l.signal()
}

func (l *lane) refuse(ev Event, why string) {
	failures.WithLabelValues(l.name, v1alpha1.ReasonQueueFull).Inc()
	l.d.log.Info("sink queue full; event refused, to be offered again by the redelivery", "sink", l.name, "aibom", ev.AIBOM.String(), "why", why)
	l.d.report(l.result(&item{ev: ev, size: len(ev.Document)}, v1alpha1.DeliveryFailed, "", v1alpha1.ReasonQueueFull,
		why+"; the document is offered again by a later redelivery pass"))
}

// take waits for the item due first whose servers have no attempt
// running, and marks it in delivery.
func (l *lane) take(ctx context.Context) *item {
	for {
		l.mu.Lock()
		var timer *time.Timer
		var wait <-chan time.Time
		var blocked []*item
		var found *item
		for len(l.due) > 0 {
			top := l.due[0]
			if d := top.due.Sub(l.d.now()); d > 0 {
				timer = time.NewTimer(d)
				wait = timer.C
				break
			}
			heap.Pop(&l.due)
			if l.blocked(top) {
				blocked = append(blocked, top)
				continue
			}
			found = top
			break
		}
		for _, b := range blocked {
			heap.Push(&l.due, b)
		}
		if found != nil {
			for _, p := range found.parts {
				l.busy[p] = true
			}
			found.holding = true
			queueDepth.WithLabelValues(l.name).Set(float64(len(l.due)))
			more := len(l.due) > 0
			l.mu.Unlock()
			if more {
				l.signal() // another worker may take the next one
			}
			return found
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-l.wake:
		case <-wait:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// blocked reports whether one of it's servers has an attempt running.
func (l *lane) blocked(it *item) bool {
	for _, p := range it.parts {
		if l.busy[p] {
			return true
		}
	}
	return false
}

// unblock ends it's attempt on its servers; l.mu is held.
func (l *lane) unblock(it *item) {
	if !it.holding {
		return
	}
	it.holding = false
	for _, p := range it.parts {
		delete(l.busy, p)
	}
}

func (l *lane) run(ctx context.Context) {
	for {
		it := l.take(ctx)
		if it == nil {
			return
		}
		l.attempt(ctx, it)
	}
}

// backoff is the wait after the attempts-th consecutive failed attempt of
// an event (Options.InitialBackoff and MaxBackoff).
func (l *lane) backoff(attempts int) time.Duration {
	return backoff(l.d.opts.InitialBackoff, l.d.opts.MaxBackoff, attempts)
}

// backoff is initial after the first failed attempt, doubling with each
// further one, at most max: apimachinery's wait.Backoff, without jitter
// (the delay is reported as status.sinks[].nextAttemptTime, so it is
// exactly what the lane waits).
func backoff(initial, max time.Duration, attempts int) time.Duration {
	b := wait.Backoff{Duration: initial, Factor: 2, Steps: math.MaxInt32, Cap: max}
	d := b.Step()
	for i := 1; i < attempts && d < max; i++ {
		d = b.Step()
	}
	return min(d, max)
}

// finish removes a delivered or failed item, putting the newer event of the
// AIBOM in its place if one came.
func (l *lane) finish(it *item) {
	l.mu.Lock()
	l.unblock(it)
	l.d.docs.release(it.held)
	key := it.ev.AIBOM
	if l.items[key] == it {
		delete(l.items, key)
		if n := it.next; n != nil {
			l.items[key] = n
			heap.Push(&l.due, n)
			queueDepth.WithLabelValues(l.name).Set(float64(len(l.due)))
		}
	}
	l.mu.Unlock()
	l.signal()
}

// retry puts a failed item back, due at its next attempt; a newer event of
// the AIBOM, if one came, replaces it instead (and starts now).
func (l *lane) retry(it *item, at time.Time) {
	l.mu.Lock()
	l.unblock(it)
	if n := it.next; n != nil {
		l.mu.Unlock()
		l.finish(it)
		return
	}
	it.due = at
	if l.items[it.ev.AIBOM] == it {
		heap.Push(&l.due, it)
		queueDepth.WithLabelValues(l.name).Set(float64(len(l.due)))
	}
	l.mu.Unlock()
	l.signal()
}

// document returns the item's document: held, or read again.
func (l *lane) document(ctx context.Context, it *item) ([]byte, error) {
	if it.ev.Op != OpWrite {
		return nil, nil
	}
	if it.held != nil {
		return it.held.data, nil
	}
	if l.d.opts.Load == nil {
		return nil, errors.New("no document loader")
	}
	return l.d.opts.Load(ctx, it.ev.AIBOM, it.ev.SHA256)
}

func (l *lane) attempt(ctx context.Context, it *item) {
	o := l.d.opts
	l.mu.Lock()
	s, scrub := l.sink, l.scrub
	l.mu.Unlock()
	it.attempts++
	n := it.attempts
	actx, cancel := context.WithTimeout(ctx, o.AttemptTimeout)
	defer cancel()
	ev := it.ev
	doc, err := l.document(actx, it)
	if errors.Is(err, ErrDocumentChanged) {
		// A newer document (or the AIBOM's deletion) was offered too.
		l.finish(it)
		return
	}
	var rec Receipt
	if err == nil {
		ev.Document = doc
		start := time.Now()
		rec, err = s.Deliver(actx, ev)
		latency.WithLabelValues(l.name).Observe(time.Since(start).Seconds())
	} else {
		err = fmt.Errorf("read the document again from its AIBOM: %w", err)
	}
	if err == nil {
		attempts.WithLabelValues(l.name, "ok").Inc()
		deliveries.WithLabelValues(l.name, string(ev.Op)).Inc()
		res := l.result(it, v1alpha1.DeliveryDelivered, rec.Location, "", "")
		if ev.Op == OpWrite {
			l.mu.Lock()
			l.delivered[ev.AIBOM] = res
			l.mu.Unlock()
		}
		l.d.report(res)
		l.finish(it)
		return
	}
	if ctx.Err() != nil {
		// Stopping (or the sink removed): the status still says Pending,
		// and the next leader delivers it again.
		l.finish(it)
		return
	}
	reason, msg := reasonOf(err), scrub.Scrub(err.Error())
	if IsPermanent(err) {
		attempts.WithLabelValues(l.name, "permanent").Inc()
		failures.WithLabelValues(l.name, reason).Inc()
		l.d.log.Info("sink refused an event", "sink", l.name, "aibom", ev.AIBOM.String(), "op", ev.Op, "reason", reason, "error", msg)
		l.d.report(l.result(it, v1alpha1.DeliveryFailed, "", reason, msg))
		l.finish(it)
		return
	}
	attempts.WithLabelValues(l.name, "transient").Inc()
	now := l.d.now()
	wait := l.backoff(n)
	if now.Sub(ev.queued)+wait > o.MaxElapsed {
		failures.WithLabelValues(l.name, reason).Inc()
		l.d.log.Info("sink delivery failed; retries exhausted, to be delivered again later", "sink", l.name, "aibom", ev.AIBOM.String(), "attempts", n, "reason", reason, "error", msg)
		l.d.report(l.result(it, v1alpha1.DeliveryFailed, "", reason, "retries exhausted after "+strconv.Itoa(n)+" attempts: "+msg))
		l.finish(it)
		return
	}
	r := l.result(it, v1alpha1.DeliveryPending, "", reason, "attempt "+strconv.Itoa(n)+" failed, retrying: "+msg)
	r.NextAttempt = now.Add(wait)
	l.d.report(r)
	l.retry(it, r.NextAttempt)
}

func (l *lane) result(it *item, state, location, reason, msg string) Result {
	ev := &it.ev
	return Result{Sink: l.name, Op: ev.Op, AIBOM: ev.AIBOM, Subject: ev.Subject, SHA256: ev.SHA256, Size: it.size,
		State: state, Location: location, Reason: reason, Message: msg, Attempts: it.attempts, At: l.d.now()}
}
