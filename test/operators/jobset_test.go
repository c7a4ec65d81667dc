//go:build qualify

package operators

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// jobsetSample is a distributed PyTorch JobSet in the shape of the JobSet
// documentation's PyTorch example (site/static/examples/pytorch): the
// v0.10.1 module ships only an empty scaffold sample
// (config/samples/batch_v1alpha2_jobset.yaml, no replicatedJobs), since
// the site's examples are not part of the module.
const jobsetSample = `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: pytorch
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          spec:
            containers:
            - name: pytorch
              image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
              command:
              - bash
              - -xc
              - |
                torchrun --rdzv_id=123 --nnodes=2 --nproc_per_node=1 --master_addr=pytorch-workers-0-0.pytorch --master_port=3389 --node_rank=$JOB_COMPLETION_INDEX mnist.py --epochs=1 --log-interval=1
`

// JobSet v0.10.1: JobSet -> Job (<jobset>-<replicatedJob>-<i>) -> Pod,
// and a headless Service.
func TestJobSet(t *testing.T) {
	startOperator(t, jobsetOperator)
	qualify(t, &qualification{
		op:          jobsetOperator,
		extra:       jobsetSample,
		extraSource: "a PyTorch JobSet written by the suite (the module's only sample, config/samples/batch_v1alpha2_jobset.yaml, is an empty scaffold)",
		roots: []root{{
			gk:      schema.GroupKind{Group: "jobset.x-k8s.io", Kind: "JobSet"},
			name:    "pytorch",
			owned:   []string{"Job.batch/pytorch-workers-0"},
			running: map[string]int{"pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime": 2},
		}},
	})
}
