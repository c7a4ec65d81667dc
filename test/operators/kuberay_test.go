//go:build qualify

package operators

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

const rayImage = "rayproject/ray:2.46.0"

// KubeRay ray-operator v1.5.0 (its webhooks are off by default): a batch
// RayJob controls its RayCluster (generated name) and its submitter Job; a
// RayService controls its RayCluster; the operator creates the head and
// worker pods directly under the RayCluster.
func TestKubeRay(t *testing.T) {
	startOperator(t, kuberayOperator)
	t.Run("RayJob", func(t *testing.T) {
		qualify(t, &qualification{
			op:      kuberayOperator,
			samples: []string{"config/samples/ray-job.sample.yaml"},
			roots: []root{{
				gk:      schema.GroupKind{Group: "ray.io", Kind: "RayJob"},
				name:    "rayjob-sample",
				owned:   []string{"RayCluster.ray.io/rayjob-sample-*", "Job.batch/rayjob-sample"},
				runtime: "ray",
				// A batch job: Ray, not Ray Serve.
				applications:    []string{"ray"},
				notApplications: []string{"ray-serve"},
				// The head, the worker and the submitter (KubeRay's
				// default submitter runs the head's image).
				running: map[string]int{rayImage: 3},
			}},
		})
	})
	t.Run("RayService", func(t *testing.T) {
		qualify(t, &qualification{
			op:      kuberayOperator,
			samples: []string{"config/samples/ray-service.sample.yaml"},
			roots: []root{{
				gk:           schema.GroupKind{Group: "ray.io", Kind: "RayService"},
				name:         "rayservice-sample",
				owned:        []string{"RayCluster.ray.io/rayservice-sample-*"},
				runtime:      "ray-serve",
				applications: []string{"ray", "ray-serve"},
				running:      map[string]int{rayImage: 2}, // the head and the worker
			}},
		})
	})
}
