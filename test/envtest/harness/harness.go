// Package harness runs the real manager against the local control plane for
// the envtest suites: it starts kube-apiserver + etcd (optionally restartable:
// StopAPIServer, StartAPIServer), the controller with the given adapters (one
// replica, or several under leader election, each of which can Crash), counts
// and logs in order every request the controller makes, and checks the
// conservation invariant against the cluster (Conservation).
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/configuration"
	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/pkg/core/watch"
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
	// certDir is the API server's fixed certificate directory of a
	// restartable control plane ("" otherwise).
	certDir string
	// kcm is the kube-controller-manager of EnvOptions.ControllerManager.
	kcm *controlplane.ControllerManager
}

// EnvOptions tune a control plane.
type EnvOptions struct {
	// CRDDirs are extra CRD directories (relative to the repository root or
	// absolute).
	CRDDirs []string
	// RestartableAPIServer keeps the API server's serving certificates in a
	// fixed directory, so that StopAPIServer and StartAPIServer bring the
	// same kube-apiserver back on the same address with the same serving CA
	// (envtest otherwise mints a new CA on a restart, which every existing
	// client would reject). etcd keeps running, and its data, meanwhile.
	RestartableAPIServer bool
	// ControllerManager starts kube-controller-manager with the garbage
	// collector and the workload controllers (controlplane.
	// WorkloadControllers): dependents are deleted for real, Deployments
	// make ReplicaSets and Pods, Jobs make Pods. Its log goes to stderr at
	// a verbose test log level (AIBOM_TEST_LOG_LEVEL), else nowhere.
	ControllerManager bool
}

// StartEnv starts the control plane with the AIBOM CRD and extra CRD dirs.
func StartEnv(extraCRDDirs ...string) (*Env, error) {
	return StartEnvWith(EnvOptions{CRDDirs: extraCRDDirs})
}

// StartEnvWith starts the control plane with options.
func StartEnvWith(opts EnvOptions) (*Env, error) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapLevel())))
	te, err := controlplane.New(opts.CRDDirs...)
	if err != nil {
		return nil, err
	}
	var certDir string
	if opts.RestartableAPIServer {
		if certDir, err = os.MkdirTemp("", "aibom-apiserver-"); err != nil {
			return nil, err
		}
		apiServer := te.ControlPlane.GetAPIServer()
		apiServer.CertDir = certDir
		// With watches open, a SIGTERMed kube-apiserver otherwise drains
		// them for longer than envtest waits (20s) before it SIGKILLs it.
		apiServer.Configure().Set("shutdown-watch-termination-grace-period", "2s")
	}
	cfg, err := te.Start()
	if err != nil {
		_ = te.Stop()
		removeDir(certDir)
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		_ = te.Stop()
		removeDir(certDir)
		return nil, err
	}
	env := &Env{Env: te, Config: cfg, Client: c, certDir: certDir}
	if opts.ControllerManager {
		var out io.Writer
		if zapLevel() < 0 {
			out = os.Stderr
		}
		if env.kcm, err = controlplane.StartControllerManager(te, nil, out); err != nil {
			_ = te.Stop()
			removeDir(certDir)
			return nil, err
		}
	}
	return env, nil
}

func removeDir(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// Stop stops the control plane.
func (e *Env) Stop() error {
	if e.kcm != nil {
		_ = e.kcm.Stop()
	}
	err := e.Env.Stop()
	removeDir(e.certDir)
	return err
}

// StopAPIServer stops the kube-apiserver process (SIGTERM, then waits for
// it to exit); etcd keeps running. Only for a RestartableAPIServer.
func (e *Env) StopAPIServer() error {
	if e.certDir == "" {
		return errors.New("the control plane was not started with RestartableAPIServer")
	}
	return e.Env.ControlPlane.APIServer.Stop()
}

// StartAPIServer starts the kube-apiserver again, on the same address and
// port with the same certificates and the same etcd, and waits until it
// reports healthy.
func (e *Env) StartAPIServer() error {
	if e.certDir == "" {
		return errors.New("the control plane was not started with RestartableAPIServer")
	}
	// A loaded machine can take longer than envtest's default 20s.
	e.Env.ControlPlane.APIServer.StartTimeout = 2 * time.Minute
	return e.Env.ControlPlane.APIServer.Start()
}

// APIServerAddress is the host:port the kube-apiserver listens on.
func (e *Env) APIServerAddress() string {
	s := e.Env.ControlPlane.APIServer.SecureServing
	return s.Address + ":" + s.Port
}

// Controller is a running manager with the core set up.
type Controller struct {
	Requests   *RequestCounter
	Manager    ctrl.Manager
	Supervisor *watch.Supervisor
	// Reconciler is the controller's reconciler (Resync runs a
	// re-verification pass).
	Reconciler *reconcile.Reconciler
	// Registry holds the controller's kinds (for Conservation).
	Registry *graph.Registry
	// Config and Sinks are the AIBOMConfig's controller and the sinks'
	// machinery, when ControllerOptions.Sinks was set.
	Config   *configuration.Controller
	Sinks    *configuration.Runtime
	cancel   context.CancelFunc
	done     chan error
	exited   chan struct{}
	link     *link
	stopOnce sync.Once
	stopErr  error
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
	// ResyncInterval of the periodic re-verification; default one hour (as
	// DiscoveryInterval). Controller.Reconciler.Resync runs a pass at once.
	ResyncInterval time.Duration
	// WatchProgressDeadline of the supervisor (0: the default).
	WatchProgressDeadline time.Duration
	// Lag, when set, delays the controller's watch events and fails its
	// reads by resource (see Lag).
	Lag *Lag
	// LeaderElection, when set, makes the manager campaign for a Lease; the
	// controller is then started without waiting for the supervisor's first
	// discovery (a replica that does not lead runs no controller). Use
	// WaitLeading to wait until it leads.
	LeaderElection *LeaderElection
	// DanglingOwnerGrace: how long a workload whose controller owner is
	// gone waits before it reports on its own (default 2s, short for the
	// tests that delete owners with no garbage collector; negative: none).
	DanglingOwnerGrace time.Duration
	// Sinks, when set, runs the AIBOMConfig and its sinks with these
	// options (as cmd/controller does).
	Sinks *configuration.Options
}

// LeaderElection configures a replica's Lease.
type LeaderElection struct {
	// ID is the Lease's name; Namespace its namespace (must exist).
	ID, Namespace string
	// LeaseDuration, RenewDeadline, RetryPeriod as in client-go (defaults
	// 4s, 3s, 1s: short, for tests).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ReleaseOnCancel: a stopped leader releases the Lease at once
	// (graceful handover) instead of letting it expire.
	ReleaseOnCancel bool
}

// StartControllerWith starts a controller with options.
func (e *Env) StartControllerWith(opts ControllerOptions, adapters ...adapter.Adapter) (*Controller, error) {
	if opts.DiscoveryInterval == 0 {
		opts.DiscoveryInterval = time.Hour
	}
	if opts.ResyncInterval == 0 {
		opts.ResyncInterval = time.Hour
	}
	if opts.DanglingOwnerGrace == 0 {
		opts.DanglingOwnerGrace = 2 * time.Second
	}
	base := e.Config
	if opts.Config != nil {
		base = opts.Config
	}
	reg, err := graph.NewRegistry(adapters...)
	if err != nil {
		return nil, err
	}
	counter := &RequestCounter{}
	l := &link{}
	cfg := rest.CopyConfig(base)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if opts.Lag != nil {
			rt = opts.Lag.wrap(rt)
		}
		return l.wrap(counter.Wrap(rt))
	}
	mgrOpts := ctrl.Options{
		Scheme:                 Scheme(),
		Cache:                  core.CacheOptions(cfg),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	}
	if le := opts.LeaderElection; le != nil {
		mgrOpts.LeaderElection = true
		mgrOpts.LeaderElectionID = le.ID
		mgrOpts.LeaderElectionNamespace = le.Namespace
		mgrOpts.LeaderElectionResourceLock = "leases"
		mgrOpts.LeaseDuration = ptr.To(durationOr(le.LeaseDuration, 4*time.Second))
		mgrOpts.RenewDeadline = ptr.To(durationOr(le.RenewDeadline, 3*time.Second))
		mgrOpts.RetryPeriod = ptr.To(durationOr(le.RetryPeriod, time.Second))
		mgrOpts.LeaderElectionReleaseOnCancel = le.ReleaseOnCancel
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	coreOpts := core.Options{Registry: reg, Tool: ControllerTool, MaxDocumentBytes: 512 * 1024,
		SkipNameValidation: true, DiscoveryInterval: opts.DiscoveryInterval, ScrapeRetry: opts.ScrapeRetry, ResyncInterval: opts.ResyncInterval,
		WatchProgressDeadline: opts.WatchProgressDeadline, DanglingOwnerGrace: opts.DanglingOwnerGrace}
	var live *configuration.Runtime
	if opts.Sinks != nil {
		so := *opts.Sinks
		so.SkipNameValidation = true
		if so.Defaults.MaxDocumentBytes == 0 {
			so.Defaults = reconcile.Config{NamespaceSelector: graph.DefaultNamespaceSelector(), MaxDocumentBytes: coreOpts.MaxDocumentBytes}
		}
		live = configuration.New(mgr, so)
		coreOpts.Sinks = live.Hub
	}
	r, sup, err := core.Setup(ctx, mgr, coreOpts)
	if err != nil {
		cancel()
		return nil, err
	}
	c := &Controller{Requests: counter, Manager: mgr, Supervisor: sup, Reconciler: r, Registry: reg, cancel: cancel, done: make(chan error, 1), exited: make(chan struct{}), link: l}
	if live != nil {
		if c.Config, err = live.Setup(ctx, mgr, r, sup); err != nil {
			cancel()
			return nil, err
		}
		c.Sinks = live
	}
	go func() {
		c.done <- mgr.Start(ctx)
		close(c.exited)
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		_ = c.Stop()
		return nil, fmt.Errorf("controller caches did not sync")
	}
	if opts.LeaderElection != nil {
		return c, nil
	}
	if err := c.waitFirstPass(syncCtx); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func durationOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (c *Controller) waitFirstPass(ctx context.Context) error {
	for !c.Supervisor.FirstPassDone() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("supervisor's first discovery did not finish")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Elected is closed once the manager leads (at once without leader
// election). controller-runtime closes it after starting the leader's
// runnables, so a leader's first writes may precede it.
func (c *Controller) Elected() <-chan struct{} { return c.Manager.Elected() }

// Leading reports whether Elected is closed.
func (c *Controller) Leading() bool {
	select {
	case <-c.Manager.Elected():
		return true
	default:
		return false
	}
}

// Exited is closed when the manager has returned, whether stopped or on its
// own (a leader that lost its Lease).
func (c *Controller) Exited() <-chan struct{} { return c.exited }

// WaitLeading waits until the manager leads and the supervisor finished its
// first discovery.
func (c *Controller) WaitLeading(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	select {
	case <-c.Manager.Elected():
	case <-ctx.Done():
		return fmt.Errorf("not elected within %s", timeout)
	}
	return c.waitFirstPass(ctx)
}

// WaitSettled waits until the controller has sent no AIBOM write for quiet
// (lease renewals, Events and reads do not count); it is how a test knows
// that a converged state is not about to change before checking it again.
func (c *Controller) WaitSettled(quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last, lastChange := c.aibomWrites(), time.Now()
	for time.Since(lastChange) < quiet {
		if time.Now().After(deadline) {
			return fmt.Errorf("the controller kept writing AIBOMs for %s", timeout)
		}
		time.Sleep(50 * time.Millisecond)
		if n := c.aibomWrites(); n != last {
			last, lastChange = n, time.Now()
		}
	}
	return nil
}

func (c *Controller) aibomWrites() int {
	n := 0
	for _, r := range c.Requests.Log() {
		if r.Write() && strings.Contains(r.Key, " aiboms") {
			n++
		}
	}
	return n
}

// Crash simulates the controller's process dying: from now on every request
// it would make fails before reaching the API server (so it neither writes
// nor renews or releases its Lease), and the manager is stopped.
func (c *Controller) Crash() {
	c.link.cut.Store(true)
	_ = c.Stop()
}

// Stop stops the manager and waits for it.
// A second call returns the first one's result.
func (c *Controller) Stop() error {
	c.stopOnce.Do(func() {
		c.cancel()
		select {
		case c.stopErr = <-c.done:
		case <-time.After(30 * time.Second):
			c.stopErr = fmt.Errorf("manager did not stop")
		}
	})
	return c.stopErr
}

// errCrashed is what every request of a crashed controller returns.
var errCrashed = errors.New("controller crashed (test): request not sent")

// link is the controller's connection to the API server; a cut link fails
// every request without sending it.
type link struct{ cut atomic.Bool }

func (l *link) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if l.cut.Load() {
			return nil, errCrashed
		}
		return rt.RoundTrip(req)
	})
}

// RequestCounter counts HTTP requests by "VERB resource", and logs them in
// order.
type RequestCounter struct {
	mu     sync.Mutex
	counts map[string]int
	seq    uint64
	log    []*Request
}

// Request is one logged request. Sent and Done are positions on one clock
// shared by every request of the counter: Sent when the request left, Done
// when its response (or error) came back; a request sent after another's
// Done was caused, or at least preceded, by that response.
type Request struct {
	// Key is "VERB resource", as counted.
	Key string
	// Path is the request's URL path (it names the namespace and object).
	Path       string
	Sent, Done uint64
	// Status is the HTTP status, 0 when the request failed without one.
	Status int
	// At is when it was sent.
	At time.Time
}

// Write reports whether the request is a POST, PUT, PATCH or DELETE.
func (r Request) Write() bool { return isWrite(r.Key) }

// Wrap is a rest.Config.WrapTransport.
func (c *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		entry := c.record(req)
		resp, err := rt.RoundTrip(req)
		c.mu.Lock()
		c.seq++
		entry.Done = c.seq
		if resp != nil {
			entry.Status = resp.StatusCode
		}
		c.mu.Unlock()
		return resp, err
	})
}

// Log returns a copy of the requests so far, in the order they were sent.
func (c *RequestCounter) Log() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Request, len(c.log))
	for i, r := range c.log {
		out[i] = *r
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *RequestCounter) record(req *http.Request) *Request {
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
	c.seq++
	entry := &Request{Key: key, Path: req.URL.Path, Sent: c.seq, At: time.Now()}
	c.log = append(c.log, entry)
	return entry
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
		if isWrite(k) {
			out[k] = v
		}
	}
	return out
}

func isWrite(key string) bool {
	return strings.HasPrefix(key, "POST ") || strings.HasPrefix(key, "PUT ") || strings.HasPrefix(key, "PATCH ") || strings.HasPrefix(key, "DELETE ")
}
