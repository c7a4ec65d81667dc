package plugin

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// ErrFault is wrapped by every error of Scrape that is the plugin
// process's fault rather than its adapter's: it crashed, hung past the
// scrape timeout, closed the connection, or is down waiting for a restart
// (or failed to restart). errors.Is(err, ErrFault) tells such an error from
// one the adapter returned, which carries the adapter's own message.
var ErrFault = errors.New("adapter plugin fault")

// ErrDown is wrapped (with ErrFault) by the error of a Scrape that was not
// sent because the plugin is down after an earlier fault, waiting for its
// restart backoff to pass: the object played no part in it.
var ErrDown = errors.New("adapter plugin down")

// ErrAdapterPanicked is wrapped by the error of a Scrape whose adapter
// panicked in the plugin (plugin.Serve recovers it and says so).
var ErrAdapterPanicked = errors.New("adapter panicked in the plugin")

// fault marks an error as ErrFault (and ErrDown when down), keeping its
// message.
type fault struct {
	error
	down bool
}

func (f fault) Is(target error) bool { return target == ErrFault || (f.down && target == ErrDown) }
func (f fault) Unwrap() error        { return f.error }

// panicked is the error of a scrape whose adapter panicked.
type panicked struct{ msg string }

func (p panicked) Error() string        { return p.msg }
func (p panicked) Is(target error) bool { return target == ErrAdapterPanicked }

// Defaults of the host's options.
const (
	DefaultScrapeTimeout = 10 * time.Second
	DefaultStartTimeout  = 10 * time.Second
	DefaultBackoff       = time.Second
	DefaultMaxBackoff    = time.Minute
	// DefaultMaxResponseBytes caps one response of a plugin (see
	// MaxResponseBytes).
	DefaultMaxResponseBytes = 4 << 20
)

// Option tunes Open, OpenDir and InProcess.
type Option func(*options)

type options struct {
	scrapeTimeout time.Duration
	startTimeout  time.Duration
	backoff       time.Duration
	maxBackoff    time.Duration
	logger        hclog.Logger
	maxResponse   int
	sha256        []byte
	stderrRate    float64
	stderrBurst   int
}

// ScrapeTimeout bounds each call to the plugin, Scrape and the Info call at
// start (default 10s). A plugin that has not answered by then is taken as
// hung: it is killed and restarted on a later call. A shorter deadline of
// the caller's context is honoured, and does not count against the plugin.
func ScrapeTimeout(d time.Duration) Option { return func(o *options) { o.scrapeTimeout = d } }

// MaxResponseBytes caps one response of the plugin (default
// DefaultMaxResponseBytes, at most MaxMessageBytes). A larger response is
// refused by the gRPC transport as it arrives, after its length prefix,
// before it is read into memory, and the scrape fails with an error naming
// the plugin and the cap; the plugin is not restarted.
func MaxResponseBytes(n int) Option { return func(o *options) { o.maxResponse = n } }

// SHA256 pins the plugin binary's SHA-256 checksum (go-plugin's
// SecureConfig): before each start, and each restart, the file is hashed and
// a plugin whose checksum differs is not started. SplitChecksum reads it
// from a "PATH@sha256:<hex>" argument. Without it, any file that passes the
// ownership and mode checks is started.
func SHA256(sum []byte) Option { return func(o *options) { o.sha256 = sum } }

// StartTimeout bounds the start of the plugin process, up to its handshake
// (default 10s).
func StartTimeout(d time.Duration) Option { return func(o *options) { o.startTimeout = d } }

// Backoff sets the delay before the first restart of a plugin that crashed
// or hung (default 1s), doubled after each failure in a row up to max
// (default 1m).
func Backoff(initial, max time.Duration) Option {
	return func(o *options) { o.backoff, o.maxBackoff = initial, max }
}

// Logger sets the logger go-plugin logs to, and the plugin's stderr lines
// are forwarded to (default: info and above, to stderr). Lines the plugin
// writes to stderr are logged at info level; hclog JSON lines keep theirs.
func Logger(l hclog.Logger) Option { return func(o *options) { o.logger = l } }

func newOptions(name string, opts []Option) options {
	o := options{
		scrapeTimeout: DefaultScrapeTimeout,
		startTimeout:  DefaultStartTimeout,
		backoff:       DefaultBackoff,
		maxBackoff:    DefaultMaxBackoff,
		maxResponse:   DefaultMaxResponseBytes,
		stderrRate:    DefaultStderrLinesPerSecond,
		stderrBurst:   DefaultStderrBurst,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.scrapeTimeout <= 0 {
		o.scrapeTimeout = DefaultScrapeTimeout
	}
	if o.startTimeout <= 0 {
		o.startTimeout = DefaultStartTimeout
	}
	if o.backoff <= 0 {
		o.backoff = DefaultBackoff
	}
	if o.maxResponse <= 0 {
		o.maxResponse = DefaultMaxResponseBytes
	}
	o.maxResponse = min(o.maxResponse, MaxMessageBytes)
	if o.stderrRate <= 0 {
		o.stderrRate = DefaultStderrLinesPerSecond
	}
	if o.stderrBurst <= 0 {
		o.stderrBurst = DefaultStderrBurst
	}
	if o.maxBackoff < o.backoff {
		o.maxBackoff = o.backoff
	}
	if o.logger == nil {
		o.logger = hclog.New(&hclog.LoggerOptions{Name: "adapter-plugin." + name, Level: hclog.Info, Output: os.Stderr})
	}
	return o
}

// instance is one running copy of a plugin: a process (Open) or an
// in-memory server (InProcess).
type instance struct {
	rpc *rpcClient
	// kill stops the instance; it is called once.
	kill func()
	// exited reports whether the process has exited.
	exited func() bool
	// stderr returns the last lines the process wrote to stderr.
	stderr func() string
}

// Client is the host side of an adapter plugin. It implements
// adapter.Adapter: Name and Kinds are the plugin's, fetched once at start;
// Scrape calls the plugin. It restarts a plugin that crashed or hung on a
// later call, with capped exponential backoff; until then Scrape returns an
// error saying the plugin is down and when it is restarted.
//
// Close stops the plugin. A Client is safe for concurrent use.
type Client struct {
	source string // the binary's path, or "in-process"
	o      options
	start  func() (*instance, error)
	stderr *stderrLog // the plugin's stderr, over all its restarts

	name  string
	kinds []adapter.Kind

	mu       sync.Mutex
	cur      *instance // nil while down
	closed   bool
	failures int       // failures in a row since the last good scrape
	downErr  error     // why the plugin is down
	retryAt  time.Time // when the next start may be attempted
	restarts int
}

var _ adapter.Adapter = (*Client)(nil)

// Open starts the plugin binary at path, checks the handshake (magic cookie
// and protocol version, adapter.ContractVersion) and fetches the adapter's
// name and kinds. A file that is not an adapter plugin (it prints something
// else than the handshake, or exits), a plugin built against another
// contract version and a plugin that does not start within the start
// timeout are refused with an error that says so.
//
// Before each start (and restart) the file is checked: it must be a regular
// executable file, not a symbolic link, owned by the controller's effective
// user or root, and not group- or world-writable; with SHA256, its checksum
// must match. A file that fails is refused with an error naming it and the
// reason.
//
// Processes started by Open are killed by Close, or by CleanupClients.
func Open(path string, opts ...Option) (*Client, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("adapter plugin %s: %w", path, err)
	}
	c := &Client{source: abs, o: newOptions(filepath.Base(abs), opts)}
	c.stderr = newStderrLog(c.o.logger.Named("stderr"), c.o.stderrRate, c.o.stderrBurst)
	c.start = func() (*instance, error) { return startProcess(abs, c.o, c.stderr) }
	if err := c.open(); err != nil {
		return nil, err
	}
	return c, nil
}

// OpenDir opens every plugin in dir: each executable file whose name does
// not start with ".", in name order. Files without an execute bit (a README)
// and subdirectories are ignored; a symbolic link or a file that fails the
// checks of Open is refused. If one plugin fails, the ones already started
// are closed and the error names the failing file.
func OpenDir(dir string, opts ...Option) ([]*Client, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("adapter plugin directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil || info.IsDir() || (info.Mode().IsRegular() && info.Mode().Perm()&0o111 == 0) {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var out []*Client
	for _, n := range names {
		c, err := Open(filepath.Join(dir, n), opts...)
		if err != nil {
			for _, o := range out {
				_ = o.Close()
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// CleanupClients kills every plugin process started by Open that is still
// running. Call it when the host exits (it is safe to call more than once).
func CleanupClients() { goplugin.CleanupClients() }

// open starts the first instance; an error is final.
func (c *Client) open() error {
	inst, info, err := c.startChecked()
	if err != nil {
		return err
	}
	c.name = info.Name
	c.kinds = fromWireKinds(info.Kinds)
	c.cur = inst
	return nil
}

// startChecked starts an instance and asks it what it is.
func (c *Client) startChecked() (*instance, *infoResponse, error) {
	inst, err := c.start()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.o.scrapeTimeout)
	defer cancel()
	info, err := inst.rpc.info(ctx)
	if err != nil {
		inst.kill()
		if status.Code(err) == codes.Unimplemented {
			return nil, nil, fmt.Errorf("adapter plugin %s completed the handshake but does not serve %s: "+
				"it is a go-plugin plugin of another application, or was not built with plugin.Serve: %w", c.source, ServiceName, err)
		}
		return nil, nil, fmt.Errorf("adapter plugin %s: asking the adapter's name and kinds: %w%s", c.source, err, stderrNote(inst))
	}
	if info.ContractVersion != adapter.ContractVersion {
		inst.kill()
		return nil, nil, fmt.Errorf("adapter plugin %s implements adapter contract version %d, this controller implements version %d: "+
			"rebuild the plugin against a matching github.com/aibom-dev/aibom", c.source, info.ContractVersion, adapter.ContractVersion)
	}
	if info.Name == "" {
		inst.kill()
		return nil, nil, fmt.Errorf("adapter plugin %s: its adapter has an empty name", c.source)
	}
	return inst, info, nil
}

// Name returns the plugin adapter's name, as it reported it at start.
func (c *Client) Name() string { return c.name }

// Kinds returns the plugin adapter's kinds, as it reported them at start, in
// a copy the caller may modify.
func (c *Client) Kinds() []adapter.Kind {
	return adapter.CloneKinds(c.kinds)
}

// Path returns the plugin binary's absolute path ("in-process" for
// InProcess).
func (c *Client) Path() string { return c.source }

// Restarts returns how many times the plugin was restarted.
func (c *Client) Restarts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restarts
}

// Close stops the plugin. Scrape fails afterwards.
func (c *Client) Close() error {
	c.mu.Lock()
	inst := c.cur
	c.cur = nil
	c.closed = true
	c.mu.Unlock()
	if inst != nil {
		inst.kill()
	}
	return nil
}

// Scrape sends obj to the plugin and returns its findings, redacted again
// as in-tree adapters redact theirs (podtemplate.RedactInto). An error of
// the adapter is returned with its message as the plugin gave it, redacted
// and cut to 4 KiB. A transport fault (the plugin crashed, did not answer
// within the scrape timeout, answered over the response cap, or is down
// waiting for a restart) is an error naming the plugin.
func (c *Client) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	if obj == nil {
		return adapter.Findings{}, fmt.Errorf("adapter plugin %q: nil object", c.name)
	}
	inst, err := c.acquire()
	if err != nil {
		return adapter.Findings{}, err
	}
	ours := time.Now().Add(c.o.scrapeTimeout)
	callerFirst := false
	if d, ok := ctx.Deadline(); ok && d.Before(ours) {
		callerFirst = true
	}
	callCtx, cancel := context.WithDeadline(ctx, ours)
	defer cancel()
	// References are resolved here, with the caller's resolver, in rounds
	// (see scrapeRequest); the plugin never gets a client.
	req := &scrapeRequest{Object: obj.Object, ResolvesReferences: true}
	var resp *scrapeResponse
	for round := 1; ; round++ {
		req.Final = round == MaxReferenceRounds
		resp, err = inst.rpc.scrape(callCtx, req)
		if err != nil || len(resp.Needs) == 0 || req.Final {
			break
		}
		resolveNeeds(ctx, req, resp.Needs)
	}
	if err == nil {
		c.succeeded(inst)
		redactFindings(&resp.Findings)
		if resp.Error != "" {
			if resp.Panicked {
				return resp.Findings, panicked{adapterError(resp.Error)}
			}
			return resp.Findings, errors.New(adapterError(resp.Error))
		}
		return resp.Findings, nil
	}
	// gRPC's deadline timer may fire before the context's: a
	// DeadlineExceeded is the caller's when its deadline came first.
	deadline := status.Code(err) == codes.DeadlineExceeded || callCtx.Err() != nil
	switch {
	case ctx.Err() != nil:
		// The caller gave up first: not the plugin's fault.
		return adapter.Findings{}, fmt.Errorf("adapter plugin %q: scrape %s: %w", c.name, objName(obj), ctx.Err())
	case deadline && callerFirst:
		return adapter.Findings{}, fmt.Errorf("adapter plugin %q: scrape %s: %w", c.name, objName(obj), context.DeadlineExceeded)
	case deadline:
		return adapter.Findings{}, c.fail(inst, fmt.Errorf("did not answer a scrape of %s within %s (hung)", objName(obj), c.o.scrapeTimeout))
	case status.Code(err) == codes.Unavailable || status.Code(err) == codes.Canceled || inst.exited():
		what := "closed the connection"
		if waitExited(inst, 250*time.Millisecond) {
			what = "crashed (its process exited)"
		}
		return adapter.Findings{}, c.fail(inst, fmt.Errorf("%s during a scrape of %s: %v%s", what, objName(obj), status.Convert(err).Message(), stderrNote(inst)))
	case status.Code(err) == codes.ResourceExhausted && strings.Contains(status.Convert(err).Message(), fmt.Sprintf("vs. %d)", c.o.maxResponse)):
		// gRPC's refusal of a response over our cap ("grpc: received message
		// larger than max (N vs. cap)"; it has no typed error for it, and a
		// request over the plugin's own limit is ResourceExhausted too);
		// the plugin is alive and is not restarted.
		return adapter.Findings{}, fmt.Errorf("adapter plugin %q (%s): its response to a scrape of %s is over the response cap of %s, refused unread (%s); "+
			"the cap is set with --adapter-plugin-max-response-bytes", c.name, c.source, objName(obj), byteSize(c.o.maxResponse), status.Convert(err).Message())
	default:
		// The plugin is alive: a message too large, a codec error.
		return adapter.Findings{}, fmt.Errorf("adapter plugin %q (%s): scrape %s: %s: %s", c.name, c.source, objName(obj), status.Code(err), status.Convert(err).Message())
	}
}

// byteSize renders a byte count for people: "4 MiB", "1536 bytes".
func byteSize(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func objName(obj *unstructured.Unstructured) string {
	s := obj.GetKind()
	if ns := obj.GetNamespace(); ns != "" {
		s += " " + ns + "/" + obj.GetName()
	} else {
		s += " " + obj.GetName()
	}
	return s
}

// acquire returns the running instance, restarting the plugin if it is down
// and its backoff has passed.
func (c *Client) acquire() (*instance, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("adapter plugin %q (%s) is closed", c.name, c.source)
	}
	if c.cur != nil {
		return c.cur, nil
	}
	now := time.Now()
	if now.Before(c.retryAt) {
		return nil, fault{fmt.Errorf("adapter plugin %q (%s) is down (%v); it is restarted on a call after %s (in %s)",
			c.name, c.source, c.downErr, c.retryAt.Format(time.RFC3339), c.retryAt.Sub(now).Round(time.Millisecond)), true}
	}
	inst, info, err := c.startChecked()
	if err == nil && (info.Name != c.name || !reflect.DeepEqual(fromWireKinds(info.Kinds), c.kinds)) {
		inst.kill()
		err = fmt.Errorf("adapter plugin %s changed its declarations since the controller started (name %q, was %q): restart the controller to load them",
			c.source, info.Name, c.name)
	}
	if err != nil {
		c.markDown(err)
		return nil, fault{fmt.Errorf("adapter plugin %q: restart failed: %w; next attempt after %s", c.name, err, c.retryAt.Format(time.RFC3339)), false}
	}
	c.cur = inst
	c.restarts++
	c.o.logger.Info("adapter plugin restarted", "adapter", c.name, "path", c.source, "restarts", c.restarts)
	return inst, nil
}

// markDown records a failure and schedules the next start; c.mu is held.
func (c *Client) markDown(err error) {
	c.failures++
	d := c.o.backoff
	for i := 1; i < c.failures && d < c.o.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.o.maxBackoff)
	c.downErr = err
	c.retryAt = time.Now().Add(d)
}

// fail takes inst down after a transport fault and returns the error the
// caller gets.
func (c *Client) fail(inst *instance, cause error) error {
	c.mu.Lock()
	current := c.cur == inst
	if current {
		c.cur = nil
		c.markDown(cause)
	}
	retryAt := c.retryAt
	c.mu.Unlock()
	if current {
		c.o.logger.Error("adapter plugin failed; restarting it on a later call", "adapter", c.name, "path", c.source, "error", cause, "retry-after", retryAt)
		// Killing waits for the process to exit: not on the caller's time.
		go inst.kill()
	}
	return fault{fmt.Errorf("adapter plugin %q (%s) %w; it is restarted on a call after %s", c.name, c.source, cause, retryAt.Format(time.RFC3339)), false}
}

// succeeded resets the backoff after a good call.
func (c *Client) succeeded(inst *instance) {
	c.mu.Lock()
	if c.cur == inst {
		c.failures = 0
	}
	c.mu.Unlock()
}

// waitExited reports whether inst's process exits within d.
func waitExited(inst *instance, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !inst.exited() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func stderrNote(inst *instance) string {
	if inst == nil || inst.stderr == nil {
		return ""
	}
	if s := strings.TrimSpace(inst.stderr()); s != "" {
		return "; its last stderr lines: " + s
	}
	return ""
}

// startProcess checks the plugin file, starts the binary and connects to
// it.
func startProcess(path string, o options, out *stderrLog) (*instance, error) {
	if err := checkPluginFile(path, effectiveUID()); err != nil {
		return nil, fmt.Errorf("adapter plugin %s %w; refusing to start it", path, err)
	}
	tail := &tailBuffer{max: 2048}
	cmd := newCommand(path)
	var secure *goplugin.SecureConfig
	if o.sha256 != nil {
		// A new hash per start: SecureConfig.Check writes into it.
		secure = &goplugin.SecureConfig{Checksum: o.sha256, Hash: sha256.New()}
	}
	gc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: pluginSets(nil),
		Cmd:              cmd,
		SecureConfig:     secure,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Managed:          true,
		StartTimeout:     o.startTimeout,
		// Both the process's stderr and what the plugin writes to
		// os.Stderr (go-plugin forwards it over gRPC) are logged line by
		// line, redacted, cut and rate-limited; the last lines are quoted in
		// crash errors. go-plugin's own logging of the lines is silenced.
		Stderr:          &stderrStream{out: out, tail: tail},
		SyncStderr:      &stderrStream{out: out, tail: tail},
		Logger:          quietStderrLogger{Logger: o.logger, binary: filepath.Base(path)},
		GRPCDialOptions: dialOptions(o.maxResponse),
	})
	fail := func(err error) (*instance, error) {
		killGroup(cmd)
		gc.Kill()
		if errors.Is(err, goplugin.ErrChecksumsDoNotMatch) {
			return nil, fmt.Errorf("adapter plugin %s has SHA-256 %s, not the pinned %x; refusing to start it", path, fileSHA256(path), o.sha256)
		}
		return nil, explainStartError(path, err, tail.String())
	}
	cp, err := gc.Client()
	if err != nil {
		return fail(err)
	}
	raw, err := cp.Dispense(PluginName)
	if err != nil {
		return fail(err)
	}
	rc, ok := raw.(*rpcClient)
	if !ok {
		return fail(fmt.Errorf("dispensed %T, not the adapter client", raw))
	}
	kill := func() {
		// go-plugin asks the plugin to exit, and kills it after 2s; its
		// children go with its process group.
		gc.Kill()
		killGroup(cmd)
	}
	return &instance{rpc: rc, kill: kill, exited: gc.Exited, stderr: tail.String}, nil
}

// explainStartError turns go-plugin's start errors into messages that say
// what is wrong with the file.
func explainStartError(path string, err error, stderr string) error {
	msg := err.Error()
	note := ""
	if s := strings.TrimSpace(stderr); s != "" {
		note = "; its stderr: " + s
	}
	switch {
	case strings.Contains(msg, "Failed to read any lines from plugin's stdout"):
		return fmt.Errorf("adapter plugin %s exited (or closed its stdout) without printing a go-plugin handshake line "+
			"(a plugin's main must call plugin.Serve from github.com/aibom-dev/aibom/pkg/adapter/plugin)%s", path, note)
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		first := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(msg, "\n", 2)[0], "Unrecognized remote plugin message:"))
		first = sanitizeStderr(first, 256, 0)
		return fmt.Errorf("adapter plugin %s is not an aibom adapter plugin: it printed %q instead of a go-plugin handshake line "+
			"(a plugin's main must call plugin.Serve from github.com/aibom-dev/aibom/pkg/adapter/plugin)%s", path, first, note)
	case strings.Contains(msg, "incompatible API version"):
		return fmt.Errorf("adapter plugin %s speaks another protocol version than this controller (adapter contract version %d): %s; "+
			"rebuild the plugin against a github.com/aibom-dev/aibom release with the same contract version",
			path, adapter.ContractVersion, firstLine(msg))
	case strings.Contains(msg, "incompatible core API version"):
		return fmt.Errorf("adapter plugin %s was built with an incompatible github.com/hashicorp/go-plugin: %s", path, firstLine(msg))
	case strings.Contains(msg, "unsupported plugin protocol"):
		return fmt.Errorf("adapter plugin %s does not serve gRPC (net/rpc plugins are not supported): %s", path, firstLine(msg))
	case strings.Contains(msg, "plugin exited before we could connect"):
		return fmt.Errorf("adapter plugin %s exited before completing the handshake%s", path, note)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("adapter plugin %s did not complete the handshake within the start timeout%s", path, note)
	}
	return fmt.Errorf("adapter plugin %s: start: %w%s", path, err, note)
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

var _ io.Writer = (*tailBuffer)(nil)

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// DroppedStderrLines returns how many lines of the plugin's stderr were not
// logged because the plugin wrote more than the rate limit (StderrRate).
func (c *Client) DroppedStderrLines() uint64 {
	if c.stderr == nil {
		return 0
	}
	return c.stderr.dropped.Load()
}
