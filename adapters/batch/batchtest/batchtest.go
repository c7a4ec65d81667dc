// Package batchtest holds the conformance fixtures of the batch adapter, in
// the style of net/http/httptest: the adapter's own conformance test and the
// run of the suite over the plugin transport (pkg/adapter/plugin) share them,
// so each fixture and expectation is written once.
package batchtest

import (
	_ "embed"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
)

// job.yaml is also the Job of the adapter's own TestScrapeJob, which cannot
// import this package (it imports the adapter).
//
//go:embed job.yaml
var job string

// The adapter has no testdata folder: its other fixtures are written here,
// in the shapes of batch_test.go.
const (
	cronJob = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly-eval}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: sglang
            image: lmsysorg/sglang:v0.4.6
            command: [python3, -m, sglang.launch_server]
            args: [--model-path, Qwen/Qwen2.5-7B-Instruct]
`
	// A job template of the wrong type: Scrape must refuse it.
	badJobTemplate = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: bad}
spec:
  schedule: "@daily"
  jobTemplate: "not a job template"
`
)

// Fixtures returns the adapter's conformance fixtures, with their
// expectations.
func Fixtures() ([]conformance.Fixture, error) {
	var errs []error
	decode := func(doc string) *unstructured.Unstructured {
		obj, err := conformance.DecodeObject([]byte(doc))
		errs = append(errs, err)
		return obj
	}
	fixtures := []conformance.Fixture{
		{Name: "job", Object: decode(job), Expect: conformance.Expect{
			Images:   []string{"python:3.12", "vllm/vllm-openai:latest"},
			Runtimes: []conformance.Claim{conformance.Inferred("vllm")},
			Models: []conformance.Claim{
				conformance.Declared("mistralai/Mistral-7B-Instruct-v0.3"),
				conformance.Declared("Qwen/Qwen2.5-72B"),
				conformance.Inferred("m"),
			},
			Data:       []conformance.Claim{conformance.Inferred("m")},
			Properties: map[string]string{batch.PropertyParallelism: "2", batch.PropertyCompletions: "4"},
		}},
		{Name: "cronjob", Object: decode(cronJob), Expect: conformance.Expect{
			Images:     []string{"lmsysorg/sglang:v0.4.6"},
			Runtimes:   []conformance.Claim{conformance.Inferred("sglang")},
			Models:     []conformance.Claim{conformance.Declared("Qwen/Qwen2.5-7B-Instruct")},
			Properties: map[string]string{batch.PropertySchedule: "0 3 * * *"},
		}},
		{Name: "bad-job-template", Object: decode(badJobTemplate), WantErr: true},
	}
	return fixtures, errors.Join(errs...)
}
