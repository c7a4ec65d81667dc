package lag

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/export"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// Issue #29 item 7, against the API server: a forged summary (kubectl's
// Runtime/Model/Confidence columns), absorbed count, or an emptied document
// with a documentRef to any URL and the real hash is repaired by one
// reconcile; the reference, which the controller never wrote, is removed
// and the document is inline again.
func TestForgedReaderFactsAndDocumentRefAreRepaired(t *testing.T) {
	c := startController(t, &harness.Lag{})
	ns := env.NewNamespace(t, "lag", true)
	env.MustApply(t, ns, harness.DeploymentChain("llama", harness.PatternDigest("d", "llama")))
	key := harness.AIBOMKey(ns, schema.GroupKind{Group: "apps", Kind: "Deployment"}, "llama")
	var good v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		return env.Client.Get(context.Background(), key, &good) == nil && good.Status.Document != ""
	}, eventually, 20*time.Millisecond)
	require.NoError(t, c.WaitSettled(2*time.Second, eventually))
	require.NoError(t, env.Client.Get(context.Background(), key, &good))
	require.NotEmpty(t, good.Status.Summary.Runtime)

	for _, tc := range []struct {
		name  string
		forge func(s *v1alpha1.AIBOMStatus)
	}{
		{"summary", func(s *v1alpha1.AIBOMStatus) {
			s.Summary.Runtime, s.Summary.Model, s.Summary.Confidence = "totally-safe", "nothing/to-see", "declared"
		}},
		{"absorbed-count", func(s *v1alpha1.AIBOMStatus) { s.AbsorbedCount = 42 }},
		{"document-ref", func(s *v1alpha1.AIBOMStatus) {
			s.Document = ""
			s.DocumentRef = &v1alpha1.DocumentReference{Sink: "webhook", Location: "https://evil.example/bom.json", SHA256: s.DocumentSHA256, Size: s.DocumentSize}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := &v1alpha1.AIBOM{}
			require.NoError(t, env.Client.Get(context.Background(), key, cur))
			base := cur.DeepCopy()
			tc.forge(&cur.Status)
			require.NoError(t, env.Client.Status().Patch(context.Background(), cur, client.MergeFrom(base)))
			require.Eventually(t, func() bool {
				a := &v1alpha1.AIBOM{}
				return env.Client.Get(context.Background(), key, a) == nil && a.Status.Document == good.Status.Document &&
					a.Status.DocumentSHA256 == good.Status.DocumentSHA256 && a.Status.DocumentRef == nil &&
					a.Status.Summary.Runtime == good.Status.Summary.Runtime && a.Status.Summary.Model == good.Status.Summary.Model &&
					a.Status.Summary.Confidence == good.Status.Summary.Confidence && a.Status.AbsorbedCount == good.Status.AbsorbedCount
			}, eventually, 20*time.Millisecond, "the forged status stands")
		})
	}
}

// Issue #29 item 8, against the API server: an AIBOM the controller did not
// write, under a name that is not its subject's AIBOM name, with a status
// that says Ready: the re-verification's sweep marks it Ready=False
// (NotWrittenByController), "aibom export" skips it, and once older than
// the grace period and without a subject it is deleted.
func TestAIBOMTheControllerDidNotWriteIsMarkedNotExportedAndRemoved(t *testing.T) {
	c := startController(t, &harness.Lag{})
	// The sweep runs once below: the controller must know the namespace is
	// opted in by then (a namespace it has not seen opt in is not its own).
	ns := readyNamespace(t, c)
	ctx := context.Background()
	doc := `{"bomFormat":"CycloneDX","specVersion":"1.6"}`
	a := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "looks-official",
		Labels: map[string]string{reconcile.ManagedByLabel: reconcile.ManagedBy}},
		Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "ghost", UID: "0000"}}}
	require.NoError(t, env.Client.Create(ctx, a))
	// A patch, not an update: the controller may already be marking the
	// object it just saw created (its own event), and the forger does not
	// care about its version.
	base := a.DeepCopy()
	a.Status.Document, a.Status.DocumentSHA256 = doc, harness.SHA256Hex(doc)
	a.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonDocumentWritten,
		Message: "trust me", LastTransitionTime: metav1.Now()}}
	require.NoError(t, env.Client.Status().Patch(ctx, a, client.MergeFrom(base)))
	key := client.ObjectKeyFromObject(a)
	// The manager's cache sees it before the pass.
	require.Eventually(t, func() bool { return c.Manager.GetCache().Get(ctx, key, &v1alpha1.AIBOM{}) == nil }, eventually, 20*time.Millisecond)

	c.Reconciler.Resync(ctx, 1000)
	require.Eventually(t, func() bool {
		got := &v1alpha1.AIBOM{}
		if env.Client.Get(ctx, key, got) != nil {
			return false
		}
		r := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
		return r != nil && r.Status == metav1.ConditionFalse && r.Reason == v1alpha1.ReasonNotWrittenByController
	}, eventually, 20*time.Millisecond, "shown Ready=False")
	var out, errs bytes.Buffer
	res, err := export.Run(ctx, export.Options{Reader: env.Client, Namespace: ns, Stdout: &out, Stderr: &errs})
	require.NoError(t, err)
	require.Equal(t, []string{ns + "/looks-official"}, res.Foreign)
	require.Zero(t, res.Written, "never exported")

	c.Reconciler.ForeignGrace = time.Nanosecond
	c.Reconciler.Resync(ctx, 1000)
	require.Eventually(t, func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, key, &v1alpha1.AIBOM{})) },
		eventually, 20*time.Millisecond, "deleted: its subject does not exist")
}
