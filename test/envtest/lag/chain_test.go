package lag

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var deploymentGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}

func deployment(ns, name string, owner *appsv1.Deployment) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.8.5"}}},
			},
		},
	}
	if owner != nil {
		d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name, UID: owner.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	return d
}

// timeToAIBOM creates a Deployment in ns and returns how long its AIBOM
// took to appear.
func timeToAIBOM(t *testing.T, ns, name string) time.Duration {
	t.Helper()
	start := time.Now()
	require.NoError(t, env.Client.Create(context.Background(), deployment(ns, name, nil)))
	key := harness.AIBOMKey(ns, deploymentGK, name)
	require.Eventually(t, func() bool {
		return env.Client.Get(context.Background(), key, &v1alpha1.AIBOM{}) == nil
	}, 2*time.Minute, 10*time.Millisecond, "no AIBOM for %s", name)
	return time.Since(start)
}

// Issue #15 item 5. A 600-Deployment controller chain, created and touched,
// must not delay another namespace's first AIBOM beyond normal queueing:
// informer handlers only enqueue, a namespace that did not opt in stops at
// the enqueue filter, and in an opted-in namespace the chain is resolved one
// bounded queue item per level. The delay is measured against the same
// AIBOM's time without the chain; the bound (2 s) is generous next to what
// is measured.
func TestLongChainElsewhereDoesNotDelayANewAIBOM(t *testing.T) {
	for _, tc := range []struct {
		name    string
		optedIn bool
	}{{"not-opted-in", false}, {"opted-in", true}} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 600
			c := startController(t, &harness.Lag{})
			tenant := env.NewNamespace(t, "lag", true)
			warmup := timeToAIBOM(t, tenant, "warmup")
			baseline := timeToAIBOM(t, tenant, "baseline")
			t.Logf("first AIBOM of the controller: %s", warmup.Round(time.Millisecond))

			attacker := env.NewNamespace(t, "chain", tc.optedIn)
			t.Cleanup(func() {
				// envtest runs no namespace controller: spare the next
				// tests' controllers the chain's replay.
				_ = env.Client.DeleteAllOf(context.Background(), &appsv1.Deployment{}, client.InNamespace(attacker))
			})
			var prev *appsv1.Deployment
			for i := range n {
				d := deployment(attacker, fmt.Sprintf("d%03d", i), prev)
				require.NoError(t, env.Client.Create(context.Background(), d))
				prev = d
			}
			// Touch the bottom of the chain.
			patch := client.MergeFrom(prev.DeepCopy())
			prev.Annotations = map[string]string{"touched": "yes"}
			require.NoError(t, env.Client.Patch(context.Background(), prev, patch))

			withChain := timeToAIBOM(t, tenant, "victim")
			t.Logf("time to a new AIBOM: %s without the chain, %s right after a %d-Deployment chain was created and touched in a namespace (opted in: %v) (delay %s)",
				baseline.Round(time.Millisecond), withChain.Round(time.Millisecond), n, tc.optedIn, (withChain - baseline).Round(time.Millisecond))
			require.Less(t, withChain-baseline, 2*time.Second)
			if tc.optedIn {
				env.Conservation(c, tenant, attacker).Eventually(t, eventually)
			} else {
				require.NoError(t, env.Conservation(c, tenant, attacker).Verify(context.Background()))
			}
		})
	}
}
