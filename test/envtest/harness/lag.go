package harness

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"time"
)

// Lag injects cache lag and unreadable kinds into a controller's
// connection (ControllerOptions.Lag): the events of a resource's watches
// reach the controller's informer a fixed delay after the API server sent
// them (its cache lags behind the cluster, and behind the controller's own
// writes), and a resource's reads can be made to fail (its informer never
// syncs). Writes are never touched.
type Lag struct {
	mu    sync.Mutex
	delay map[string]time.Duration // resource -> watch event delay
	fail  map[string]bool          // resource -> reads fail
}

// DelayWatch delays every event of the resource's watches opened from now
// on by d ("aiboms", "cronjobs", ...; 0 removes the delay).
func (l *Lag) DelayWatch(resource string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.delay == nil {
		l.delay = map[string]time.Duration{}
	}
	l.delay[resource] = d
}

// FailReads makes every read (get, list, watch) of the resource fail with
// an internal error while on.
func (l *Lag) FailReads(resource string, on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail == nil {
		l.fail = map[string]bool{}
	}
	l.fail[resource] = on
}

func (l *Lag) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			return rt.RoundTrip(req)
		}
		res := resourceOf(req.URL.Path)
		l.mu.Lock()
		fail, delay := l.fail[res], l.delay[res]
		l.mu.Unlock()
		if fail {
			body := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected read failure (test)","reason":"InternalError","code":500}`
			return &http.Response{StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error",
				Header: http.Header{"Content-Type": []string{"application/json"}}, Body: io.NopCloser(bytes.NewBufferString(body)),
				Request: req, ContentLength: int64(len(body))}, nil
		}
		resp, err := rt.RoundTrip(req)
		if err != nil || delay <= 0 || req.URL.Query().Get("watch") != "true" {
			return resp, err
		}
		resp.Body = newDelayedBody(resp.Body, delay)
		return resp, nil
	})
}

// delayedBody hands out each chunk of a stream delay after it arrived.
type delayedBody struct {
	src    io.ReadCloser
	delay  time.Duration
	chunks chan chunk
	done   chan struct{}
	once   sync.Once
	buf    []byte
	err    error
}

type chunk struct {
	at   time.Time
	data []byte
	err  error
}

func newDelayedBody(src io.ReadCloser, delay time.Duration) *delayedBody {
	b := &delayedBody{src: src, delay: delay, chunks: make(chan chunk, 1024), done: make(chan struct{})}
	go b.pump()
	return b
}

func (b *delayedBody) pump() {
	for {
		p := make([]byte, 32*1024)
		n, err := b.src.Read(p)
		select {
		case b.chunks <- chunk{at: time.Now(), data: p[:n], err: err}:
		case <-b.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (b *delayedBody) Read(p []byte) (int, error) {
	for len(b.buf) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		var c chunk
		select {
		case c = <-b.chunks:
		case <-b.done:
			return 0, io.ErrClosedPipe
		}
		select {
		case <-time.After(time.Until(c.at.Add(b.delay))):
		case <-b.done:
			return 0, io.ErrClosedPipe
		}
		b.buf, b.err = c.data, c.err
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (b *delayedBody) Close() error {
	b.once.Do(func() { close(b.done) })
	return b.src.Close()
}
