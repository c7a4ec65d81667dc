package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// scrapeFunc is an adapter declaring the Widget kind whose scrape the test
// decides.
type scrapeFunc struct {
	mu     sync.Mutex
	scrape func() (adapter.Findings, error)
}

func (*scrapeFunc) Name() string { return "widgets" }
func (*scrapeFunc) Kinds() []adapter.Kind {
	return []adapter.Kind{coretest.Kind("example.com", "Widget", "widgets", "v1", adapter.RoleTracked)}
}
func (a *scrapeFunc) Scrape(context.Context, *unstructured.Unstructured) (adapter.Findings, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.scrape()
}
func (a *scrapeFunc) set(f func() (adapter.Findings, error)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.scrape = f
}

// recordedEvent is one Event the reconciler emitted.
type recordedEvent struct{ regarding, eventType, reason, action, note string }

type eventLog struct {
	mu     sync.Mutex
	events []recordedEvent
}

func (l *eventLog) Eventf(regarding runtime.Object, _ runtime.Object, eventType, reason, action, note string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := regarding.(client.Object)
	l.events = append(l.events, recordedEvent{o.GetName(), eventType, reason, action, fmt.Sprintf(note, args...)})
}

func (l *eventLog) all() []recordedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]recordedEvent(nil), l.events...)
}

// reconcilerFixture is a reconciler over one Widget in an opted-in
// namespace, with a fake API server for namespaces and AIBOMs.
type reconcilerFixture struct {
	r       *Reconciler
	adapter *scrapeFunc
	events  *eventLog
	client  client.Client
	req     Request
	key     client.ObjectKey
}

func newReconcilerFixture(t *testing.T, maxBytes int) *reconcilerFixture {
	t.Helper()
	a := &scrapeFunc{scrape: func() (adapter.Findings, error) { return adapter.Findings{}, nil }}
	reg, err := graph.NewRegistry(a)
	require.NoError(t, err)
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(coretest.WidgetGVK)
	widget.SetNamespace(coretest.Ns)
	widget.SetName("graph")
	widget.SetUID(types.UID("uid-graph"))

	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: coretest.Ns, Labels: map[string]string{graph.OptInLabel: "true"}}}).
		WithStatusSubresource(&v1alpha1.AIBOM{}).Build()
	events := &eventLog{}
	r := &Reconciler{
		Registry: reg, Store: graph.NewMemoryStore([]client.Object{widget}), Reader: c, Writer: c, Recorder: events,
		Tool: document.Tool{Version: "test"}, MaxDocumentBytes: maxBytes, ScrapeRetry: 7 * time.Second,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		// The widget's findings are empty: these tests are about writing,
		// not about which roots match (TestUnmatchedRoots).
		ReportAll: true,
	}
	gk := coretest.WidgetGVK.GroupKind()
	return &reconcilerFixture{r: r, adapter: a, events: events, client: c,
		req: Request{GroupKind: gk, Namespace: coretest.Ns, Name: "graph"},
		key: client.ObjectKey{Namespace: coretest.Ns, Name: AIBOMName(gk, "graph")}}
}

func (f *reconcilerFixture) aibom(t *testing.T) *v1alpha1.AIBOM {
	t.Helper()
	a := &v1alpha1.AIBOM{}
	require.NoError(t, f.client.Get(context.Background(), f.key, a))
	return a
}

func outcomes(outcome string) float64 {
	var m dto.Metric
	if err := reconcileOutcomes.WithLabelValues("Widget.example.com", outcome).Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// A workload whose scrape fails the first time it is seen (a malformed
// object): the failure is counted as scrape_failed (not as created), an
// AIBOM says why in its Ready condition, a Warning Event names the adapter,
// and the workload is retried; a later good scrape makes it Ready.
func TestScrapeFailureOnANewRootIsCountedExplainedAndRetried(t *testing.T) {
	f := newReconcilerFixture(t, 0)
	f.adapter.set(func() (adapter.Findings, error) {
		return adapter.Findings{}, errors.New("spec.image.repository: expected string, got number")
	})
	failedBefore, createdBefore := outcomes(OutcomeScrapeFailed), outcomes(OutcomeCreated)

	res, err := f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	require.Equal(t, 7*time.Second, res.RequeueAfter, "a failed scrape is retried")
	require.Equal(t, failedBefore+1, outcomes(OutcomeScrapeFailed))
	require.Equal(t, createdBefore, outcomes(OutcomeCreated))

	a := f.aibom(t)
	ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	require.NotNil(t, ready)
	require.Equal(t, metav1.ConditionFalse, ready.Status)
	require.Equal(t, v1alpha1.ReasonScrapeFailed, ready.Reason)
	require.Contains(t, ready.Message, "spec.image.repository: expected string, got number")
	require.Empty(t, a.Status.Document, "nothing is fabricated for a workload that could not be read")
	require.Equal(t, []recordedEvent{{"graph", corev1.EventTypeWarning, v1alpha1.ReasonScrapeFailed, "Scrape",
		"adapter widgets could not read the workload: spec.image.repository: expected string, got number"}}, f.events.all())

	// The same failure again: nothing written, still counted and retried.
	res, err = f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	require.Equal(t, 7*time.Second, res.RequeueAfter)
	require.Equal(t, failedBefore+2, outcomes(OutcomeScrapeFailed))
	require.Len(t, f.events.all(), 1, "no Event without a change")

	// Fixed: Ready, with a document.
	f.adapter.set(func() (adapter.Findings, error) { return adapter.Findings{}, nil })
	res, err = f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter)
	a = f.aibom(t)
	ready = meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	require.Equal(t, metav1.ConditionTrue, ready.Status)
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))
}

// A scrape that fails after a good one keeps the last good document.
func TestScrapeFailureKeepsTheLastGoodDocument(t *testing.T) {
	f := newReconcilerFixture(t, 0)
	_, err := f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	good := f.aibom(t).Status
	require.NotEmpty(t, good.Document)

	f.adapter.set(func() (adapter.Findings, error) { return adapter.Findings{}, errors.New("plugin restarting") })
	_, err = f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	a := f.aibom(t)
	require.Equal(t, good.Document, a.Status.Document)
	require.Equal(t, good.DocumentSHA256, a.Status.DocumentSHA256)
	require.Equal(t, v1alpha1.ReasonScrapeFailed, meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady).Reason)
}

// An adapter's error is quoted in a condition and an Event: a long one is
// cut to what an events.k8s.io note accepts (1024 characters), on a rune
// boundary, and a secret it quotes is redacted.
func TestScrapeErrorMessagesAreBoundedAndRedacted(t *testing.T) {
	f := newReconcilerFixture(t, 0)
	token := "hf_" + "Zq8wErTy5uIoP3aSdFgH7jKlZxCvBnM1q2"
	long := "bad value " + token + " " + strings.Repeat("é", 5000)
	f.adapter.set(func() (adapter.Findings, error) { return adapter.Findings{}, errors.New(long) })
	_, err := f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)

	ready := meta.FindStatusCondition(f.aibom(t).Status.Conditions, v1alpha1.ConditionReady)
	events := f.events.all()
	require.Len(t, events, 1)
	for _, msg := range []string{ready.Message, events[0].note} {
		require.LessOrEqual(t, len(msg), 1024)
		require.True(t, utf8.ValidString(msg))
		require.NotContains(t, msg, token)
		require.Contains(t, msg, "bad value REDACTED")
	}
}

// A document over the inline cap even with every component dropped (here:
// thousands of redaction records, which are never dropped) is not written:
// Ready is False with reason BuildFailed, a Warning Event says why, the
// outcome is build_failed, and the last good document stays.
func TestDocumentOverTheCapWithNothingToDropIsNotWritten(t *testing.T) {
	f := newReconcilerFixture(t, 4096)
	_, err := f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	good := f.aibom(t).Status
	require.NotEmpty(t, good.Document)

	f.adapter.set(func() (adapter.Findings, error) {
		var out adapter.Findings
		for i := 0; i < 200; i++ {
			out.Redactions = append(out.Redactions, adapter.Redaction{Locator: fmt.Sprintf("spec.env[%d](SECRET_%d)", i, i), Reason: "secret-name"})
		}
		return out, nil
	})
	// At 4096 bytes the bare skeleton fits: written, without the
	// redactions, and counting them.
	_, err = f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	bare := f.aibom(t).Status
	require.LessOrEqual(t, len(bare.Document), 4096)
	require.Contains(t, bare.Document, `"components-dropped:0,properties-dropped:200"`)
	require.NotContains(t, bare.Document, "SECRET_")
	tr := meta.FindStatusCondition(bare.Conditions, v1alpha1.ConditionTruncated)
	require.Equal(t, metav1.ConditionTrue, tr.Status)
	require.Contains(t, tr.Message, "200 document properties dropped")

	// Below the smallest cap any flag or configuration allows
	// (document.MinMaxBytes) not even the skeleton fits: the defence stays.
	f.r.MaxDocumentBytes = 400
	good = bare
	before := outcomes(OutcomeBuildFailed)
	_, err = f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	require.Equal(t, before+1, outcomes(OutcomeBuildFailed))
	a := f.aibom(t)
	require.Equal(t, good.Document, a.Status.Document, "a document over the cap is never written")
	ready := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReady)
	require.Equal(t, metav1.ConditionFalse, ready.Status)
	require.Equal(t, v1alpha1.ReasonBuildFailed, ready.Reason)
	require.Contains(t, ready.Message, "exceeds the size limit")
	events := f.events.all()
	require.Len(t, events, 1)
	require.Equal(t, v1alpha1.ReasonBuildFailed, events[0].reason)
	require.Equal(t, corev1.EventTypeWarning, events[0].eventType)
}

// A document over the cap that fits once components are dropped is written
// truncated, with the Truncated condition True; the same inputs give the
// same bytes.
func TestDocumentOverTheCapIsTruncatedAndSaysSo(t *testing.T) {
	f := newReconcilerFixture(t, 8192)
	findings := adapter.Findings{}
	for i := 0; i < 100; i++ {
		findings.Containers = append(findings.Containers, adapter.Container{Name: fmt.Sprintf("c%d", i), Image: fmt.Sprintf("registry.example/team/image-%03d:1.0", i),
			Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: fmt.Sprintf("spec.containers[%d].image", i)}})
	}
	f.adapter.set(func() (adapter.Findings, error) { return findings, nil })
	_, err := f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	a := f.aibom(t)
	require.LessOrEqual(t, len(a.Status.Document), 8192)
	require.Contains(t, a.Status.Document, `"aibom.truncation.applied"`)
	tr := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionTruncated)
	require.NotNil(t, tr)
	require.Equal(t, metav1.ConditionTrue, tr.Status)
	require.Equal(t, v1alpha1.ReasonOverInlineCap, tr.Reason)
	require.NoError(t, document.ValidateSchema([]byte(a.Status.Document)))

	// Rebuilt from scratch (a new AIBOM): byte-identical.
	require.NoError(t, f.client.Delete(context.Background(), a))
	f.r.written.Delete(f.key)
	_, err = f.r.Reconcile(context.Background(), f.req)
	require.NoError(t, err)
	require.Equal(t, a.Status.Document, f.aibom(t).Status.Document)
}

// A root with no AI signal gets no AIBOM and loses an existing one; any
// signal (here an accelerator alone) matches; a failing scrape decides
// nothing; --report=all reports every root.
func TestUnmatchedRoots(t *testing.T) {
	f := newReconcilerFixture(t, 0)
	ctx := context.Background()
	f.r.ReportAll = false
	before := outcomes(OutcomeUnmatched)

	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})), "no AIBOM for a root without AI signal")
	require.Equal(t, before+1, outcomes(OutcomeUnmatched))

	// An accelerator alone is a signal.
	gpu := adapter.Findings{Accelerators: []adapter.Accelerator{{Resource: "nvidia.com/gpu", Quantity: "1",
		Evidence: adapter.Evidence{Source: adapter.SourceResourceRequest, Locator: "spec.x"}}}}
	f.adapter.set(func() (adapter.Findings, error) { return gpu, nil })
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Contains(t, f.aibom(t).Status.Document, `"accelerator:nvidia.com/gpu"`, "the document says why it matched")

	// A failing scrape keeps it.
	f.adapter.set(func() (adapter.Findings, error) { return adapter.Findings{}, errors.New("plugin restarting") })
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.NotEmpty(t, f.aibom(t).Status.Document)

	// The signal gone, the AIBOM goes.
	f.adapter.set(func() (adapter.Findings, error) { return adapter.Findings{}, nil })
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, f.key, &v1alpha1.AIBOM{})), "the AIBOM of a root that lost its AI signal is deleted")

	// --report=all restores it.
	f.r.ReportAll = true
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Contains(t, f.aibom(t).Status.Document, `"aibom.match"`)
}

// The controller marks what it writes; an AIBOM under a workload's AIBOM
// name that describes another subject is taken over with an Event when the
// workload is reported, and left alone when the workload's AIBOM would be
// deleted.
func TestAIBOMIdentity(t *testing.T) {
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	_, err := f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	a := f.aibom(t)
	require.Equal(t, ManagedBy, a.Labels[ManagedByLabel], "what the controller writes is marked")

	// A hand-made AIBOM under that name, describing something else.
	require.NoError(t, f.client.Delete(ctx, a))
	forged := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: f.key.Name},
		Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "someone-else", UID: "u-x"}}}
	require.NoError(t, f.client.Create(ctx, forged))
	f.r.written = writeLog{}
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	a = f.aibom(t)
	require.Equal(t, "graph", a.Spec.Subject.Name, "taken over and rewritten for the workload")
	require.Equal(t, ManagedBy, a.Labels[ManagedByLabel])
	require.NotEmpty(t, a.Status.Document)
	var reasons []string
	for _, e := range f.events.events {
		reasons = append(reasons, e.reason)
	}
	require.Contains(t, reasons, ReasonAIBOMTakenOver)

	// The workload goes; an AIBOM of another subject under its name stays.
	require.NoError(t, f.client.Delete(ctx, a))
	other := forged.DeepCopy()
	other.ResourceVersion = ""
	require.NoError(t, f.client.Create(ctx, other))
	f.r.written = writeLog{}
	f.r.Store = graph.NewMemoryStore(nil)
	_, err = f.r.Reconcile(ctx, f.req)
	require.NoError(t, err)
	require.Equal(t, "someone-else", f.aibom(t).Spec.Subject.Name, "another subject's AIBOM is not deleted")
}

func TestLongNamesGetA64BitSuffixAndTheOldAIBOMIsRenamed(t *testing.T) {
	gk := coretest.WidgetGVK.GroupKind()
	short := AIBOMName(gk, "graph")
	_, renamed := LegacyAIBOMName(gk, "graph")
	require.False(t, renamed, "a name that fits keeps its AIBOM name")
	require.Regexp(t, `^widget-graph-[0-9a-f]{8}$`, short)

	long := strings.Repeat("a", 250)
	name := AIBOMName(gk, long)
	require.LessOrEqual(t, len(name), 253)
	require.Regexp(t, `-[0-9a-f]{16}$`, name, "a shortened prefix leaves the hash alone to tell subjects apart: 64 bits")
	legacy, renamed := LegacyAIBOMName(gk, long)
	require.True(t, renamed)
	require.Regexp(t, `-[0-9a-f]{8}$`, legacy)
	// Two long names that share the shortened prefix differ by the hash.
	require.NotEqual(t, name, AIBOMName(gk, long+"b"))

	// An AIBOM an earlier release wrote under the legacy name is deleted
	// once the workload's AIBOM is written under the new one.
	ctx := context.Background()
	f := newReconcilerFixture(t, 0)
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(coretest.WidgetGVK)
	w.SetNamespace(coretest.Ns)
	w.SetName(long)
	w.SetUID("uid-long")
	f.r.Store = graph.NewMemoryStore([]client.Object{w})
	old := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: coretest.Ns, Name: legacy, Labels: map[string]string{ManagedByLabel: ManagedBy}},
		Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: coretest.WidgetGVK.GroupVersion().String(), Kind: "Widget", Name: long, UID: "uid-long"}}}
	require.NoError(t, f.client.Create(ctx, old))
	_, err := f.r.Reconcile(ctx, Request{GroupKind: gk, Namespace: coretest.Ns, Name: long})
	require.NoError(t, err)
	require.NoError(t, f.client.Get(ctx, client.ObjectKey{Namespace: coretest.Ns, Name: name}, &v1alpha1.AIBOM{}))
	require.True(t, apierrors.IsNotFound(f.client.Get(ctx, client.ObjectKey{Namespace: coretest.Ns, Name: legacy}, &v1alpha1.AIBOM{})),
		"the AIBOM under the legacy name must be gone")
}
