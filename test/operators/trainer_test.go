//go:build qualify

package operators

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// trainJob fine-tunes with the torchtune Llama 3.2 1B runtime the Trainer
// ships, as the Kubeflow documentation's LLM fine-tuning guide does: the
// v2.0.0 module has the runtimes (manifests/base/runtimes) but no TrainJob
// sample.
const trainJob = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tune-llama
spec:
  runtimeRef:
    name: torchtune-llama3.2-1b
`

// initializer: the dataset and model initializers' pods run to
// completion (the trainer node's Job depends on them).
func initializer(p *corev1.Pod) bool {
	switch p.Labels["jobset.sigs.k8s.io/replicatedjob-name"] {
	case "dataset-initializer", "model-initializer":
		return true
	}
	return false
}

// Kubeflow Trainer v2.0.0 on JobSet v0.10.1: TrainJob -> JobSet -> Jobs
// (dataset-initializer, model-initializer, node) -> Pods; the
// ClusterTrainingRuntime is referenced, not an owner.
func TestKubeflowTrainer(t *testing.T) {
	startOperator(t, jobsetOperator)
	startOperator(t, trainerOperator)
	qualify(t, &qualification{
		op:          trainerOperator,
		samples:     []string{"manifests/base/runtimes/torchtune/llama3_2/llama3_2_1B.yaml"},
		extra:       trainJob,
		extraSource: "a TrainJob naming that runtime, written by the suite (the module ships runtimes, no TrainJob)",
		finish:      initializer,
		roots: []root{{
			gk:   schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"},
			name: "tune-llama",
			owned: []string{"JobSet.jobset.x-k8s.io/tune-llama", "Job.batch/tune-llama-dataset-initializer-0",
				"Job.batch/tune-llama-model-initializer-0", "Job.batch/tune-llama-node-0"},
			// The model initializer's STORAGE_URI is the model; the
			// dataset initializer's is data.
			models:  []string{"meta-llama/Llama-3.2-1B-Instruct"},
			data:    []string{"tatsu-lab/alpaca"},
			running: map[string]int{"ghcr.io/kubeflow/trainer/torchtune-trainer": 1},
		}},
	})
}
