// Package appstest holds the conformance fixtures of the apps adapter, in the
// style of net/http/httptest: the adapter's own conformance test and the run
// of the suite over the plugin transport (pkg/adapter/plugin) share them, so
// each fixture and expectation is written once.
package appstest

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// The adapter has no testdata folder: its fixtures are written here, one per
// tracked kind, in the shapes of apps_test.go.
const (
	deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
  namespace: ml
  annotations:
    model.aibom.dev/base: meta-llama/Llama-3.1-8B-Instruct
spec:
  replicas: 2
  selector: {matchLabels: {app: llama}}
  template:
    metadata:
      labels: {app: llama}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--port", "8000"]
        env:
        - name: HUGGING_FACE_HUB_TOKEN
          valueFrom: {secretKeyRef: {name: hf-token, key: token}}
        - name: HF_TOKEN
          value: hf_abcdefghijklmnopqrstuvwxyz0123456789AB
        volumeMounts:
        - {name: cache, mountPath: /root/.cache/huggingface}
      volumes:
      - name: cache
        persistentVolumeClaim: {claimName: llama-cache}
`
	statefulSet = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: tgi}
spec:
  replicas: 1
  serviceName: tgi
  template:
    spec:
      containers:
      - name: tgi
        image: ghcr.io/huggingface/text-generation-inference:2.4.0
        env: [{name: HF_MODEL_ID, value: bigscience/bloom-560m}]
        volumeMounts: [{name: weights, mountPath: /weights}]
  volumeClaimTemplates:
  - metadata: {name: weights}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 100Gi}}}
`
	daemonSet = `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ollama}
spec:
  template:
    spec:
      initContainers:
      - {name: pull, image: "busybox:1.36", command: [sh, -c, "true"]}
      containers:
      - {name: ollama, image: "ollama/ollama:0.5.7"}
`
	// A template of the wrong type: Scrape must refuse it.
	badTemplate = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  template: [not, a, template]
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
		{Name: "deployment", Object: decode(deployment), Expect: conformance.Expect{
			Images:   []string{"vllm/vllm-openai:v0.6.3"},
			Runtimes: []conformance.Claim{conformance.Inferred("vllm")},
			// From the workload annotation and from --model.
			Models:     []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-8B-Instruct")},
			Data:       []conformance.Claim{conformance.Inferred("cache (llama-cache)")},
			Properties: map[string]string{apps.PropertyReplicas: "2"},
			Redactions: []adapter.Redaction{{Locator: "spec.template.spec.containers[0].env[1](HF_TOKEN)", Reason: podtemplate.ReasonSecretName}},
		}},
		{Name: "statefulset", Object: decode(statefulSet), Expect: conformance.Expect{
			Images:     []string{"ghcr.io/huggingface/text-generation-inference:2.4.0"},
			Runtimes:   []conformance.Claim{conformance.Inferred("tgi")},
			Models:     []conformance.Claim{conformance.Inferred("bigscience/bloom-560m")},
			Data:       []conformance.Claim{conformance.Inferred("weights (volumeClaimTemplate)")},
			Properties: map[string]string{apps.PropertyReplicas: "1"},
		}},
		{Name: "daemonset", Object: decode(daemonSet), Expect: conformance.Expect{
			Images:   []string{"ollama/ollama:0.5.7", "busybox:1.36"},
			Runtimes: []conformance.Claim{conformance.Inferred("ollama")},
		}},
		{Name: "bad-template", Object: decode(badTemplate), WantErr: true},
	}
	return fixtures, errors.Join(errs...)
}
