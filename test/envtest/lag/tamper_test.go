package lag

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// Issue #15 item 4. Someone with write access to aiboms/status replaces the
// document (alone, with a matching hash, or the input hash): the stored
// status must equal what the controller would write, so the AIBOM event
// maps back to its subject and one reconcile restores it, with one write.
func TestForgedStatusIsRestoredWithinOneReconcile(t *testing.T) {
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
	const forged = `{"bomFormat":"CycloneDX","specVersion":"1.6","components":[{"type":"container","name":"totally-safe"}]}`

	for _, tc := range []struct {
		name  string
		forge func(s *v1alpha1.AIBOMStatus)
	}{
		{"document", func(s *v1alpha1.AIBOMStatus) { s.Document = forged }},
		{"document-and-hash", func(s *v1alpha1.AIBOMStatus) { s.Document, s.DocumentSHA256 = forged, harness.SHA256Hex(forged) }},
		{"input-hash", func(s *v1alpha1.AIBOMStatus) { s.InputHash = strings.Repeat("0", 64) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := &v1alpha1.AIBOM{}
			require.NoError(t, env.Client.Get(context.Background(), key, cur))
			base := cur.DeepCopy()
			tc.forge(&cur.Status)
			writes := c.Requests.Snapshot()
			require.NoError(t, env.Client.Status().Patch(context.Background(), cur, client.MergeFrom(base)))
			require.Eventually(t, func() bool {
				a := &v1alpha1.AIBOM{}
				return env.Client.Get(context.Background(), key, a) == nil && a.Status.Document == good.Status.Document &&
					a.Status.DocumentSHA256 == good.Status.DocumentSHA256 && a.Status.InputHash == good.Status.InputHash
			}, eventually, 20*time.Millisecond, "the forged status stands")
			require.NoError(t, c.WaitSettled(time.Second, eventually))
			require.Equal(t, map[string]int{"PATCH aiboms/status": 1}, harness.Writes(c.Requests.Since(writes)), "one reconcile, one write")
		})
	}
}
