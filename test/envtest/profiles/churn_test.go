package profiles

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// #29: churn that interleaves, at random (seeded), the creation of chains of
// a profile-defined kind, their background deletion (no garbage collector
// here: the children stay, their controller reference dangling), the
// profile's removal and return (the kind a generic root, then tracked
// again), and opt-in flaps. Once it stops with the profile in force,
// conservation holds: every workload in exactly one AIBOM, no AIBOM of a
// deleted owner, no duplicate.
func TestChurnWithProfileAddAndRemoveConserves(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "pchurn", true)
	const name = "widgets-churn"
	profile := widgetProfile(name, "")
	applyProfile(t, profile)
	require.True(t, meta.IsStatusConditionTrue([]metav1.Condition{*accepted(t, name)}, v1alpha1.ConditionAccepted))
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &v1alpha1.AIBOMAdapterProfile{ObjectMeta: metav1.ObjectMeta{Name: name}})
		env.SetOptIn(t, ns, "false")
	})
	profiled := true
	rng := rand.New(rand.NewSource(2932))
	var live []*unstructured.Unstructured
	deleted := 0
	ops := map[string]int{}
	for step := 0; step < 24; step++ {
		switch r := rng.Float64(); {
		case r < 0.35:
			ops["create"]++
			chain := strings.ReplaceAll(widgetChain, "gizmo", fmt.Sprintf("w%d", step))
			live = append(live, env.MustApply(t, ns, chain)[0])
		case r < 0.55 && len(live) > 0:
			ops["delete"]++
			i := rng.Intn(len(live))
			err := env.Client.Delete(ctx, live[i], client.PropagationPolicy(metav1.DeletePropagationBackground))
			require.NoError(t, client.IgnoreNotFound(err))
			live = append(live[:i], live[i+1:]...)
			deleted++
		case r < 0.8:
			if profiled {
				ops["profile-remove"]++
				err := env.Client.Delete(ctx, &v1alpha1.AIBOMAdapterProfile{ObjectMeta: metav1.ObjectMeta{Name: name}})
				require.True(t, err == nil || apierrors.IsNotFound(err), "%v", err)
			} else {
				ops["profile-add"]++
				applyProfile(t, profile)
			}
			profiled = !profiled
		default:
			ops["flap"]++
			env.SetOptIn(t, ns, "false")
			time.Sleep(time.Duration(rng.Intn(400)) * time.Millisecond)
			env.SetOptIn(t, ns, "true")
		}
		time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond)
	}
	for _, op := range []string{"create", "delete", "profile-remove", "profile-add", "flap"} {
		require.Positive(t, ops[op], "the seeded churn does %s: %v", op, ops)
	}
	if !profiled {
		applyProfile(t, profile)
	}
	accepted(t, name)
	rep := env.Conservation(controller, ns).Eventually(t, eventually+removalGrace)
	// One AIBOM per widget left, and one per deleted widget's Deployment:
	// its owner gone, it is a root of its own once the dangling grace ends.
	require.Equal(t, len(live)+deleted, rep.AIBOMs, "after the churn %v", ops)
	require.NoError(t, controller.WaitSettled(2*time.Second, eventually))
	require.NoError(t, env.Conservation(controller, ns).Verify(ctx), "conservation still holds once settled")
	t.Logf("after the churn %v: %d widgets, %d orphaned Deployments, %d AIBOMs", ops, len(live), deleted, rep.AIBOMs)
}
