package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
)

// The checks, in the order they run. Each is a subtest of the test that
// calls Run; Skip takes these names (or "<check>/<fixture>").
const (
	CheckDeclarations    = "Declarations"
	CheckFixtures        = "Fixtures"
	CheckDeterminism     = "Determinism"
	CheckNoMutation      = "NoMutation"
	CheckWellFormed      = "WellFormed"
	CheckNoSecrets       = "NoSecrets"
	CheckMalformedInput  = "MalformedInput"
	CheckCrossVersion    = "CrossVersion"
	CheckNonTrackedKinds = "NonTrackedKinds"
	CheckExpectations    = "Expectations"
)

// Checks lists the check names in the order they run.
func Checks() []string {
	return []string{
		CheckDeclarations, CheckFixtures, CheckDeterminism, CheckNoMutation, CheckWellFormed,
		CheckNoSecrets, CheckMalformedInput, CheckCrossVersion, CheckNonTrackedKinds, CheckExpectations, CheckReferences,
	}
}

// Fixture is one object the suite scrapes.
type Fixture struct {
	// Name is a short name for the report, unique in the harness, e.g. the
	// file name without extension. It names the fixture's subtests.
	Name string
	// Object is an object of a tracked kind of the adapter, with apiVersion
	// in one of the versions the adapter declares for the kind, decoded the
	// way the core receives it (DecodeObject: JSON numbers as int64).
	Object *unstructured.Unstructured
	// Expect lists facts the scrape must find. It is a subset check: the
	// scrape may find more.
	Expect Expect
	// WantErr says the object is malformed: Scrape must return an error (and
	// must not panic). Expect is then ignored, and the fixture does not count
	// for the Fixtures coverage check. Expect.WantErr says the same, for
	// fixtures loaded from files (LoadFixtures).
	WantErr bool
	// References are objects of the adapter's referenced kinds that exist
	// when Object is scraped (in Object's namespace, or cluster-scoped): the
	// suite resolves the scrape's references among them (ObjectResolver).
	// Expect holds with them; the References check scrapes again without
	// them, with them forbidden, and with their spec emptied.
	References []*unstructured.Unstructured
}

// Expect lists facts a scrape must find. Every field is optional; each
// listed fact must be present in the findings (the findings may hold more).
type Expect struct {
	// Images are container images (adapter.Container.Image), as written.
	Images []string
	// Runtimes are serving runtime claims, by name and confidence.
	Runtimes []Claim
	// Models are model claims, by name and confidence.
	Models []Claim
	// Data are model storage claims, by name and confidence.
	Data []Claim
	// Frameworks are evaluation or training framework claims, by name and
	// confidence.
	Frameworks []Claim
	// InitContainers are names of containers that must be reported as init
	// containers (adapter.Container.Init).
	InitContainers []string
	// Properties are name/value pairs that must be recorded.
	Properties map[string]string
	// PodNames maps a container name to pod-status names its
	// adapter.Container.PodNames must include.
	PodNames map[string][]string
	// Redactions are redactions that must be recorded, by locator and
	// reason; an empty Reason matches any reason.
	Redactions []adapter.Redaction
	// ImagesFromPods are names of containers that must be reported without
	// an image, left to the pods (adapter.Container.ImageFromPods).
	ImagesFromPods []string
	// WantErr says the fixture is malformed on purpose: Scrape must return
	// an error, and the facts above are not checked. It is Fixture.WantErr
	// for fixtures loaded with LoadFixtures, whose expectations are keyed by
	// file name:
	//
	//	conformance.LoadFixtures("testdata/*.yaml", map[string]conformance.Expect{
	//		"bad-image": {WantErr: true}, // testdata/bad-image.yaml
	//	})
	WantErr bool
}

// IsZero reports whether e expects no fact (WantErr aside).
func (e Expect) IsZero() bool {
	return len(e.Images) == 0 && len(e.Runtimes) == 0 && len(e.Models) == 0 && len(e.Data) == 0 &&
		len(e.Properties) == 0 && len(e.PodNames) == 0 && len(e.Redactions) == 0 && len(e.ImagesFromPods) == 0 &&
		len(e.Frameworks) == 0 && len(e.InitContainers) == 0
}

// wantErr reports whether the fixture must make Scrape fail, by
// Fixture.WantErr or Expect.WantErr.
func (fx Fixture) wantErr() bool { return fx.WantErr || fx.Expect.WantErr }

// Claim names a runtime, model or data finding. An empty Confidence matches
// any confidence.
type Claim struct {
	Name       string
	Confidence adapter.Confidence
}

func (c Claim) String() string {
	if c.Confidence == "" {
		return fmt.Sprintf("%q", c.Name)
	}
	return fmt.Sprintf("%q (%s)", c.Name, c.Confidence)
}

// Declared is a Claim with confidence adapter.Declared.
func Declared(name string) Claim { return Claim{Name: name, Confidence: adapter.Declared} }

// Inferred is a Claim with confidence adapter.Inferred.
func Inferred(name string) Claim { return Claim{Name: name, Confidence: adapter.Inferred} }

// Harness is what an adapter author supplies: the adapter under test and
// fixtures of its tracked kinds.
type Harness interface {
	// Adapter returns the adapter under test. It may be called more than
	// once; each call may return the same adapter.
	Adapter() adapter.Adapter
	// Fixtures returns the fixtures. The suite never modifies them: it
	// scrapes deep copies.
	Fixtures() []Fixture
}

// NewHarness returns a Harness for an adapter and its fixtures.
func NewHarness(a adapter.Adapter, fixtures ...Fixture) Harness {
	return staticHarness{a: a, fixtures: fixtures}
}

type staticHarness struct {
	a        adapter.Adapter
	fixtures []Fixture
}

func (h staticHarness) Adapter() adapter.Adapter { return h.a }
func (h staticHarness) Fixtures() []Fixture      { return h.fixtures }

// Options tune a run. Build them with the Option functions.
type Options struct {
	// Skip leaves checks out, each with a reason.
	Skip []Exception
	// MissingFixtures excuses tracked kind versions without a fixture, each
	// keyed "<Kind>.<group>/<version>" (adapter.Kind.String() + "/" +
	// version), with a reason.
	MissingFixtures []Exception
	// Allowed are values the NoSecrets check accepts although
	// podtemplate.Redact would mask them, each with a reason.
	Allowed []Exception
	// WalkOnly says the adapter is meant to declare no tracked kind; the
	// reason is logged.
	WalkOnly string
	// LocatorRoots are the first fields locators may start with, beyond
	// LocatorRoots().
	LocatorRoots []string
	// Budget is the deadline of the context each malformed scrape gets
	// (default 10s). A scrape that has not returned Budget after its
	// deadline fails.
	Budget time.Duration
	// HugeList is the length of the lists the MalformedInput check puts at
	// every list path (default 10000; 1000 with go test -short).
	HugeList int
	// NestingDepth is the depth of the nested junk the MalformedInput check
	// puts at every path (default 256).
	NestingDepth int
	// PluginSHA256 pins the SHA-256 of the binary RunPlugin starts, as the
	// controller's PATH@sha256:<hex> does.
	PluginSHA256 []byte
}

// Exception names something the suite would check and says why it is not.
type Exception struct {
	Name   string
	Reason string
}

// Option sets an Options field.
type Option func(*Options)

// Skip leaves out a check ("MalformedInput") or one fixture's subtest of a
// check ("MalformedInput/llama"), with a reason that is logged. A Skip that
// names nothing that runs fails the run.
func Skip(test, reason string) Option {
	return func(o *Options) { o.Skip = append(o.Skip, Exception{Name: test, Reason: reason}) }
}

// MissingFixture excuses a tracked kind version without a fixture. kind is
// adapter.Kind.String() ("NIMService.apps.nvidia.com"), version a declared
// version.
func MissingFixture(kind, version, reason string) Option {
	return func(o *Options) {
		o.MissingFixtures = append(o.MissingFixtures, Exception{Name: kind + "/" + version, Reason: reason})
	}
}

// AllowValue lets the NoSecrets check accept a value that podtemplate.Redact
// would mask, such as a Git commit hash recorded as a model revision.
func AllowValue(value, reason string) Option {
	return func(o *Options) { o.Allowed = append(o.Allowed, Exception{Name: value, Reason: reason}) }
}

// WalkOnly says the adapter declares only walk-only kinds on purpose (it
// connects owners to pods and is never scraped, like grove). Without it, an
// adapter with no tracked kind fails the Declarations check.
func WalkOnly(reason string) Option { return func(o *Options) { o.WalkOnly = reason } }

// LocatorRoot adds a first field evidence locators may start with, for an
// adapter that reads outside spec and metadata.
func LocatorRoot(root string) Option {
	return func(o *Options) { o.LocatorRoots = append(o.LocatorRoots, root) }
}

// Budget sets the deadline of the context each malformed scrape gets.
func Budget(d time.Duration) Option { return func(o *Options) { o.Budget = d } }

// HugeList sets the length of the lists the MalformedInput check builds.
func HugeList(n int) Option { return func(o *Options) { o.HugeList = n } }

// PluginChecksum pins the SHA-256 of the plugin binary RunPlugin starts.
func PluginChecksum(sum []byte) Option { return func(o *Options) { o.PluginSHA256 = sum } }

// NestingDepth sets the depth of the junk the MalformedInput check builds.
func NestingDepth(n int) Option { return func(o *Options) { o.NestingDepth = n } }

// LocatorRoots returns the first fields every evidence and redaction locator
// may start with: the object's "spec" and "metadata". A locator is rooted
// when it is the root itself or continues with "." or "[".
func LocatorRoots() []string { return []string{"spec", "metadata"} }

// Confidences returns the closed set of adapter.Confidence values.
func Confidences() []adapter.Confidence {
	return []adapter.Confidence{adapter.Declared, adapter.Inferred, adapter.Unresolved}
}

// Sources returns the closed set of adapter.Source values: every Source
// constant of package adapter.
func Sources() []adapter.Source {
	return []adapter.Source{
		adapter.SourceCRDField,
		adapter.SourceContainerArg,
		adapter.SourceContainerCommand,
		adapter.SourceEnvVar,
		adapter.SourceImageReference,
		adapter.SourceImagePattern,
		adapter.SourcePodStatus,
		adapter.SourceWorkloadAnnotation,
		adapter.SourcePodTemplateAnnotation,
		adapter.SourceVolumeSource,
		adapter.SourceResourceRequest,
		adapter.SourcePodTemplateLabel,
	}
}

// TB is the part of testing.TB the suite reports to. Run adapts a
// *testing.T; a Recorder implements it in memory.
type TB interface {
	// Helper marks the calling function as a helper.
	Helper()
	// Errorf reports a failure and continues.
	Errorf(format string, args ...any)
	// Logf records a message.
	Logf(format string, args ...any)
	// Run runs f as a subtest named name and reports whether it passed.
	Run(name string, f func(t TB)) bool
}

// Run runs the conformance suite against the harness's adapter, as subtests
// of t.
//
// With go test -short, the MalformedInput check builds lists of 1000 entries
// instead of 10000, unless HugeList says otherwise.
func Run(t *testing.T, h Harness, opts ...Option) {
	t.Helper()
	if testing.Short() {
		opts = append([]Option{HugeList(1000)}, opts...)
	}
	RunTB(testingT{t}, h, opts...)
}

// RunPlugin runs the conformance suite against a built adapter plugin
// binary, started and spoken to exactly as the controller does
// (plugin.Open: the file checks, the go-plugin handshake, the gRPC
// service, the host's limits and redaction), with the given fixtures. It
// fails the test at once when the binary cannot be started.
//
// Over the wire a panic of the plugin's adapter, or a crash of its
// process, arrives as an error: the suite fails it as it fails a panic in
// process. Each call to the plugin gets half the Budget as its timeout, so
// a plugin that hangs is killed, restarted and reported, not waited for.
//
//	func TestPluginConformance(t *testing.T) {
//		bin := filepath.Join(t.TempDir(), "myadapter")
//		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
//			t.Fatalf("go build: %v\n%s", err, out)
//		}
//		conformance.RunPlugin(t, bin, fixtures)
//	}
func RunPlugin(t *testing.T, binary string, fixtures []Fixture, opts ...Option) {
	t.Helper()
	if testing.Short() {
		opts = append([]Option{HugeList(1000)}, opts...)
	}
	if !RunPluginTB(testingT{t}, binary, fixtures, opts...) {
		t.FailNow()
	}
}

// RunPluginTB is RunPlugin reporting to any TB (a Recorder, say). It
// returns false when the plugin could not be started (reported to t).
func RunPluginTB(t TB, binary string, fixtures []Fixture, opts ...Option) bool {
	t.Helper()
	o := Options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Budget <= 0 {
		o.Budget = 10 * time.Second
	}
	popts := []plugin.Option{plugin.ScrapeTimeout(o.Budget / 2), plugin.Backoff(10*time.Millisecond, 100*time.Millisecond)}
	if o.PluginSHA256 != nil {
		popts = append(popts, plugin.SHA256(o.PluginSHA256))
	}
	c, err := plugin.Open(binary, popts...)
	if err != nil {
		t.Errorf("conformance: %v", err)
		return false
	}
	defer func() { _ = c.Close() }()
	RunTB(t, NewHarness(waitRestart{c}, fixtures...), opts...)
	return true
}

// waitRestart is a plugin client whose Scrape, when the plugin is down
// after a fault an earlier object caused, waits for the restart instead of
// blaming the object at hand.
type waitRestart struct{ *plugin.Client }

func (w waitRestart) Scrape(ctx context.Context, obj *unstructured.Unstructured) (adapter.Findings, error) {
	for {
		f, err := w.Client.Scrape(ctx, obj)
		if !errors.Is(err, plugin.ErrDown) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return f, err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// RunTB runs the conformance suite, reporting to t. Use it with a Recorder
// to run the suite outside go test.
func RunTB(t TB, h Harness, opts ...Option) {
	t.Helper()
	o := Options{Budget: 10 * time.Second, HugeList: 10000, NestingDepth: 256}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Budget <= 0 {
		o.Budget = 10 * time.Second
	}
	if o.HugeList <= 0 {
		o.HugeList = 10000
	}
	if o.NestingDepth <= 0 {
		o.NestingDepth = 256
	}
	if h == nil || h.Adapter() == nil {
		t.Errorf("conformance: the harness has no adapter; return the adapter under test from Harness.Adapter")
		return
	}
	s := &suite{t: t, h: h, a: h.Adapter(), o: o, usedSkips: map[string]bool{}}
	for _, sk := range o.Skip {
		if strings.TrimSpace(sk.Reason) == "" {
			t.Errorf("conformance: Skip(%q) gives no reason; say why the check does not apply", sk.Name)
		}
	}
	s.run()
	for _, sk := range o.Skip {
		if !s.usedSkips[sk.Name] {
			t.Errorf("conformance: Skip(%q) names no check that runs (known checks: %s); remove it or fix the name",
				sk.Name, strings.Join(Checks(), ", "))
		}
	}
}

// testingT adapts *testing.T to TB.
type testingT struct{ *testing.T }

func (t testingT) Run(name string, f func(t TB)) bool {
	return t.T.Run(name, func(t *testing.T) { f(testingT{t}) })
}

// skipReason returns the reason a test path is skipped, if it is.
func (s *suite) skipReason(path string) (string, bool) {
	for _, sk := range s.o.Skip {
		if sk.Name == path {
			s.usedSkips[sk.Name] = true
			return sk.Reason, true
		}
	}
	return "", false
}

// sub runs f as a subtest of t named name, unless path (the subtest's path
// under the suite root) is skipped; then it logs the reason on t.
func (s *suite) sub(t TB, path, name string, f func(t TB)) {
	t.Helper()
	if reason, ok := s.skipReason(path); ok {
		t.Logf("conformance: %s not run: %s", path, reason)
		return
	}
	t.Run(name, f)
}

func exceptionFor(list []Exception, name string) (string, bool) {
	i := slices.IndexFunc(list, func(e Exception) bool { return e.Name == name })
	if i < 0 {
		return "", false
	}
	return list[i].Reason, true
}
