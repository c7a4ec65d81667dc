//go:build qualify

package operators

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/adapters/lws"
)

// The qualification fails when the operator builds a chain no adapter
// follows. Shown with LeaderWorkerSet v0.7.0's sample under a controller
// that runs every in-tree adapter but lws and apps, as a controller meets
// an operator (or an operator version) whose chain it does not know: the
// LWS is still a (generic) root, but it owns none of the StatefulSets, and
// the check that make qualify runs fails on the chain. (Without the lws
// adapter alone the generic fallback follows the chain fully: measured.) (By hand: make qualify
// QUALIFY_FLAGS='-run TestLeaderWorkerSet -adapters=batch,kuberay,trainer'.)
func TestAChainNoAdapterFollowsFailsTheQualification(t *testing.T) {
	var others []string
	for _, n := range intree.Names() {
		if n != lws.Name && n != apps.Name {
			others = append(others, n)
		}
	}
	require.NoError(t, controller.Stop())
	c, err := startControllerWith(strings.Join(others, ","))
	require.NoError(t, err)
	controller = c
	t.Cleanup(func() {
		_ = controller.Stop()
		c, err := startController()
		require.NoError(t, err)
		controller = c
	})

	startOperator(t, lwsOperator)
	ns := env.NewNamespace(t, "q", true)
	q := &qualification{op: lwsOperator, samples: []string{"docs/examples/vllm/GPU/lws.yaml"}, roots: []root{{
		gk: schema.GroupKind{Group: "leaderworkerset.x-k8s.io", Kind: "LeaderWorkerSet"}, name: "vllm",
		owned:   []string{"StatefulSet.apps/vllm", "StatefulSet.apps/vllm-0", "StatefulSet.apps/vllm-1"},
		runtime: "vllm", models: []string{"meta-llama/Llama-3.1-405B-Instruct"},
		running: map[string]int{"vllm/vllm-openai:latest": 4},
	}}}
	objs := q.objects(t)
	apply(t, ns, objs)
	ctx := context.Background()
	// Every pod runs, and the controller is done writing.
	require.Eventually(t, func() bool {
		_, _ = runPods(ctx, ns, nil)
		var pods corev1.PodList
		require.NoError(t, env.Client.List(ctx, &pods, client.InNamespace(ns)))
		running := 0
		for _, p := range pods.Items {
			if len(p.Status.ContainerStatuses) > 0 {
				running++
			}
		}
		return running == 4 && len(aibomSubjects(t, ns)) > 0
	}, eventually, tick, "the sample's 4 pods run and an AIBOM is written")
	require.NoError(t, controller.WaitSettled(5*time.Second, eventually))
	_, err = checkDocuments(ctx, ns, q.roots)
	require.Error(t, err, "the qualification must fail when no adapter follows the operator's chain")
	t.Logf("the qualification's failure, as make qualify prints it:\n%v", err)
	require.Contains(t, err.Error(), "LeaderWorkerSet/vllm: owned [], want [StatefulSet.apps/vllm StatefulSet.apps/vllm-0 StatefulSet.apps/vllm-1]")
	deleteRoots(t, ns, objs, q.roots)
}
