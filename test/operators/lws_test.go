//go:build qualify

package operators

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// LeaderWorkerSet v0.7.0 with its vLLM multi-node sample: two groups of a
// leader and a worker. The chain is LeaderWorkerSet -> StatefulSet
// (leaders) -> Pod (leader) -> StatefulSet (that group's workers, whose
// controller is the leader Pod) -> Pod.
func TestLeaderWorkerSet(t *testing.T) {
	startOperator(t, lwsOperator)
	qualify(t, &qualification{
		op:      lwsOperator,
		samples: []string{"docs/examples/vllm/GPU/lws.yaml"},
		roots: []root{{
			gk:      schema.GroupKind{Group: "leaderworkerset.x-k8s.io", Kind: "LeaderWorkerSet"},
			name:    "vllm",
			owned:   []string{"StatefulSet.apps/vllm", "StatefulSet.apps/vllm-0", "StatefulSet.apps/vllm-1"},
			runtime: "vllm",
			models:  []string{"meta-llama/Llama-3.1-405B-Instruct"},
			running: map[string]int{"vllm/vllm-openai:latest": 4},
		}},
	})
}
