package scale

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/aibom-dev/aibom/internal/controlplane"
)

// buildController builds the controller binary from this checkout.
func buildController(t *testing.T) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "aibom-controller")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/controller")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/controller: %s", out)
	return bin
}

// testLog forwards progress lines to t.Log.
type testLog struct {
	t  *testing.T
	mu sync.Mutex
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// TestScaleSmall runs the whole harness at a small size (2 namespaces,
// about 300 objects, every chain shape) against the real controller binary.
// It asserts counts, never times: the run converges to exactly the expected
// AIBOMs; a root costs its create and its status; an annotation no adapter
// reads costs no request at all; and no reconcile reads pods or walk-only
// kinds live.
func TestScaleSmall(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // the harness's own AIBOM watch
	bin := buildController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{
		Controller: bin,
		Namespaces: 2,
		Objects:    300,
		// No background discovery or probe in the measured phases.
		DiscoveryInterval: time.Hour,
		Quiet:             5 * time.Second,
		Replay:            true,
		Rounds:            2,
		Timeout:           3 * time.Minute,
		WorkDir:           t.TempDir(),
		Log:               &testLog{t: t},
	})
	var md bytes.Buffer
	rep.WriteMarkdown(&md)
	t.Log("\n" + md.String())
	// Run fails unless every root got exactly its AIBOM (absorbed list,
	// every digest resolved) and no other AIBOM exists.
	require.NoError(t, err)
	require.True(t, rep.CorrectAtEnd)
	roots := rep.Load.Roots
	require.Equal(t, 50, roots)
	require.Len(t, rep.Load.RootsByShape, 7, "every chain shape is loaded")

	// Cold start. The load, pod statuses included, was written before the
	// controller started, so a root's first reconcile has everything.
	cold := rep.ColdStart.Requests
	require.Zero(t, cold["PUT aiboms"], "no update of an AIBOM's spec")
	require.Zero(t, cold["PUT aiboms/status"])
	// The controller's workers wait for every kind's cache (the
	// supervisor's startup source), so no workload is reported before its
	// owner's kind is readable and no root before its descendants' kinds
	// are: every root costs exactly one create and one status patch, and no
	// AIBOM is created only to be deleted again.
	require.Equal(t, roots, cold["POST aiboms"], "one create per root")
	require.Equal(t, roots, cold["PATCH aiboms/status"], "one status patch per root")
	require.Zero(t, cold["DELETE aiboms"], "no AIBOM created and deleted again")
	require.Equal(t, roots, rep.ColdStart.Outcomes["created"])
	require.Zero(t, rep.ColdStart.Outcomes["updated"], "no root written twice")
	t.Logf("cold start: %d roots, %d writes (%.2f per root)", roots, rep.ColdStart.Writes, rep.ColdStart.WritesPerRoot)

	// No live read of pods or walk-only kinds per reconcile: at most the
	// informers' initial list and watch (a retry at most), never a GET per
	// workload (there are 111 pods and 50 roots).
	for _, resource := range []string{"pods", "replicasets", "podcliquesets", "podcliquescalinggroups", "podcliques"} {
		require.LessOrEqual(t, cold["GET "+resource], 2, resource)
		require.LessOrEqual(t, cold["WATCH "+resource], 3, resource)
		require.LessOrEqual(t, cold["GET "+resource]+cold["WATCH "+resource], 3, resource)
	}

	// Steady state: every root annotated with an annotation no adapter
	// reads. Each is reconciled, its inputs hash the same, and nothing is
	// sent to the API server: no write, no read.
	require.Equal(t, roots, rep.Steady.Annotated)
	require.GreaterOrEqual(t, rep.Steady.Reconciles, roots)
	require.Equal(t, map[string]int{"unchanged": rep.Steady.Reconciles}, rep.Steady.Outcomes)
	require.Empty(t, rep.Steady.Requests)
	require.Zero(t, rep.Steady.Writes)
	// And a quiet period costs nothing either.
	require.Empty(t, rep.Quiet.Requests)
	require.Zero(t, rep.Quiet.Reconciles)

	require.Positive(t, rep.Memory.PeakRSS)
	require.Positive(t, rep.Memory.HeapInuseAtEnd)
	require.GreaterOrEqual(t, rep.Memory.PeakRSS, rep.Memory.RSSAtEnd)
	require.NotNil(t, rep.Replay)
	require.Equal(t, 2*roots, rep.Replay.Writes)
	require.Equal(t, roots, rep.Replay.OriginalsDeleted, "the replay starts with the controller's AIBOMs deleted")

	// A second round: every AIBOM deleted, the controller restarted until
	// the set is exact again (Run fails otherwise), and replayed.
	require.Len(t, rep.Rounds, 2)
	require.Equal(t, rep.ColdStart.ConvergedSeconds, rep.Rounds[0].ConvergedSeconds)
	require.Equal(t, rep.Replay.Seconds, rep.Rounds[0].ReplaySeconds)
	for i, r := range rep.Rounds {
		require.Positive(t, r.ConvergedSeconds, "round %d", i+1)
		require.Positive(t, r.ReplaySeconds, "round %d", i+1)
		require.Positive(t, r.Ratio, "round %d", i+1)
	}
	require.Equal(t, median([]float64{rep.Rounds[0].Ratio, rep.Rounds[1].Ratio}), rep.RatioMedian)
}
