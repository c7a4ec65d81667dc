package idle

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// blackholeProxy is a loopback proxy in front of the API server. It forwards
// every request; Blackhole makes the watches of a resource open at that
// moment stop forwarding anything while their connections stay open: a
// watch that stopped silently, as behind a stuck middlebox. Watches opened
// afterwards are forwarded as usual.
type blackholeProxy struct {
	srv      *httptest.Server
	upstream *url.URL
	rt       http.RoundTripper

	mu      sync.Mutex
	streams map[*stream]struct{}
	// ended counts blackholed watches that their client closed.
	ended atomic.Int32
}

type stream struct {
	resource   string
	blackholed atomic.Bool
}

func newBlackholeProxy(t *testing.T, cfg *rest.Config) *blackholeProxy {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	require.NoError(t, err)
	up, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	p := &blackholeProxy{upstream: up, rt: rt, streams: map[*stream]struct{}{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// Config is the REST config of a client that goes through the proxy.
func (p *blackholeProxy) Config() *rest.Config { return &rest.Config{Host: p.srv.URL} }

// Blackhole silences the open watches of a resource ("deployments") and
// returns how many there were.
func (p *blackholeProxy) Blackhole(resource string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for s := range p.streams {
		if s.resource == resource {
			s.blackholed.Store(true)
			n++
		}
	}
	return n
}

func (p *blackholeProxy) serve(w http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host = p.upstream.Scheme, p.upstream.Host
	out.Host, out.RequestURI = "", ""
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if q := r.URL.Query().Get("watch"); q != "true" && q != "1" {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	path := strings.Split(strings.TrimRight(r.URL.Path, "/"), "/")
	s := &stream{resource: path[len(path)-1]}
	p.mu.Lock()
	p.streams[s] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.streams, s)
		p.mu.Unlock()
		if s.blackholed.Load() && r.Context().Err() != nil {
			p.ended.Add(1)
		}
	}()
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32*1024)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 && !s.blackholed.Load() {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
