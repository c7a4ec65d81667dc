// Package harness runs the real manager against the local control plane for
// the envtest suites: it starts kube-apiserver + etcd, the controller with the
// given adapters, and counts every request the controller makes.
package harness

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/pkg/core/document"
)

// Scheme knows the built-in kinds and the AIBOM.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	return s
}

// Env is a running control plane.
type Env struct {
	Env    *envtest.Environment
	Config *rest.Config
	// Client is the test's own client (its requests are not counted).
	Client client.Client
}

// StartEnv starts the control plane with the AIBOM CRD and extra CRD dirs.
func StartEnv(extraCRDDirs ...string) (*Env, error) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapLevel())))
	te, err := controlplane.New(extraCRDDirs...)
	if err != nil {
		return nil, err
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		_ = te.Stop()
		return nil, err
	}
	return &Env{Env: te, Config: cfg, Client: c}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.Env.Stop() }

// Controller is a running manager with the core set up.
type Controller struct {
	Requests   *RequestCounter
	Manager    ctrl.Manager
	Supervisor *core.Supervisor
	cancel     context.CancelFunc
	done       chan error
}

// ControllerTool is the tool name and version the harness's controller
// writes into documents.
var ControllerTool = document.Tool{Name: document.ToolName, Version: "test"}

// StartController starts a manager with the given adapters against env. Its
// requests are counted.
func (e *Env) StartController(adapters ...adapter.Adapter) (*Controller, error) {
	return e.StartControllerWith(ControllerOptions{}, adapters...)
}

// ControllerOptions tune a test controller.
type ControllerOptions struct {
	// DiscoveryInterval of the supervisor; default one hour, so that no
	// background discovery or probe lands in a test's request count.
	DiscoveryInterval time.Duration
	// Config overrides the REST config (e.g. a restricted user).
	Config *rest.Config
	// ScrapeRetry: how soon a failed scrape is retried (default 30s).
	ScrapeRetry time.Duration
}

// StartControllerWith starts a controller with options.
func (e *Env) StartControllerWith(opts ControllerOptions, adapters ...adapter.Adapter) (*Controller, error) {
	if opts.DiscoveryInterval == 0 {
		opts.DiscoveryInterval = time.Hour
	}
	base := e.Config
	if opts.Config != nil {
		base = opts.Config
	}
	reg, err := core.NewRegistry(adapters...)
	if err != nil {
		return nil, err
	}
	counter := &RequestCounter{}
	cfg := rest.CopyConfig(base)
	cfg.WrapTransport = counter.Wrap
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 Scheme(),
		Cache:                  core.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, sup, err := core.Setup(ctx, mgr, core.Options{Registry: reg, Tool: ControllerTool, MaxDocumentBytes: 512 * 1024,
		SkipNameValidation: true, DiscoveryInterval: opts.DiscoveryInterval, ScrapeRetry: opts.ScrapeRetry})
	if err != nil {
		cancel()
		return nil, err
	}
	c := &Controller{Requests: counter, Manager: mgr, Supervisor: sup, cancel: cancel, done: make(chan error, 1)}
	go func() { c.done <- mgr.Start(ctx) }()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		c.Stop()
		return nil, fmt.Errorf("controller caches did not sync")
	}
	for !sup.FirstPassDone() {
		select {
		case <-syncCtx.Done():
			c.Stop()
			return nil, fmt.Errorf("supervisor's first discovery did not finish")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return c, nil
}

// Stop stops the manager and waits for it.
func (c *Controller) Stop() error {
	c.cancel()
	select {
	case err := <-c.done:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("manager did not stop")
	}
}

// RequestCounter counts HTTP requests by "VERB resource".
type RequestCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// Wrap is a rest.Config.WrapTransport.
func (c *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.record(req)
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *RequestCounter) record(req *http.Request) {
	verb := req.Method
	if req.Method == http.MethodGet && req.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	key := verb + " " + resourceOf(req.URL.Path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[key]++
}

// resourceOf reduces an API path to its resource (and subresource), e.g.
// /apis/aibom.dev/v1alpha1/namespaces/x/aiboms/y/status -> aiboms/status.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) > 0 && parts[0] == "api":
		parts = parts[min(2, len(parts)):]
	case len(parts) > 0 && parts[0] == "apis":
		parts = parts[min(3, len(parts)):]
	default:
		return path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		if len(parts) == 2 {
			return "namespaces"
		}
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "discovery"
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

// Snapshot returns a copy of the counts so far.
func (c *RequestCounter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Since returns the requests made after an earlier snapshot.
func (c *RequestCounter) Since(before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range c.Snapshot() {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// Writes filters counts to writing verbs.
func Writes(counts map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range counts {
		if strings.HasPrefix(k, "POST ") || strings.HasPrefix(k, "PUT ") || strings.HasPrefix(k, "PATCH ") || strings.HasPrefix(k, "DELETE ") {
			out[k] = v
		}
	}
	return out
}
