package podtemplate_test

// go test -run '^$' -bench . -benchmem -count 5 ./pkg/adapter/podtemplate/

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// benchDeployment is a vLLM Deployment: one container with 10 args and 5
// env vars (one from a Secret, one a literal token), 2 volumes.
const benchDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
  namespace: ml
  uid: 6f1c2b9e-3d4a-4e5f-8a7b-1c2d3e4f5a6b
  annotations:
    model.aibom.dev/name: meta-llama/Llama-3.1-8B-Instruct
    deployment.kubernetes.io/revision: "3"
  labels: {app: llama}
spec:
  replicas: 2
  selector: {matchLabels: {app: llama}}
  template:
    metadata:
      labels: {app: llama}
      annotations: {prometheus.io/scrape: "true", prometheus.io/port: "8000"}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--port", "8000",
               "--tensor-parallel-size", "2", "--max-model-len", "8192",
               "--gpu-memory-utilization=0.9", "--enable-prefix-caching"]
        env:
        - name: HF_TOKEN
          valueFrom: {secretKeyRef: {name: hf, key: token}}
        - {name: HF_HOME, value: /root/.cache/huggingface}
        - {name: VLLM_LOGGING_LEVEL, value: INFO}
        - {name: HF_MODEL_ID, value: meta-llama/Llama-3.1-8B-Instruct}
        - {name: API_KEY, value: sk-live-0123456789abcdefghijklmnop}
        ports: [{containerPort: 8000, name: http}]
        resources:
          limits: {nvidia.com/gpu: 2, memory: 48Gi}
          requests: {cpu: "8", memory: 32Gi}
        readinessProbe:
          httpGet: {path: /health, port: 8000}
        volumeMounts:
        - {name: cache, mountPath: /root/.cache/huggingface}
        - {name: shm, mountPath: /dev/shm}
      volumes:
      - name: cache
        persistentVolumeClaim: {claimName: llama-cache}
      - name: shm
        emptyDir: {medium: Memory, sizeLimit: 2Gi}
`

// deployment decodes a manifest as the core receives it (numbers as int64).
// containers > 1 appends copies of the first container as sidecars with
// their own names and images.
func deployment(b *testing.B, containers int) *unstructured.Unstructured {
	b.Helper()
	js, err := yaml.YAMLToJSON([]byte(benchDeployment))
	if err != nil {
		b.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		b.Fatal(err)
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	first := list[0].(map[string]any)
	for i := 1; i < containers; i++ {
		c := deepCopy(first)
		c["name"] = fmt.Sprintf("sidecar-%02d", i)
		c["image"] = fmt.Sprintf("registry.example.com/tools/sidecar-%02d:1.%d.0", i, i)
		list = append(list, c)
	}
	if err := unstructured.SetNestedSlice(u.Object, list, "spec", "template", "spec", "containers"); err != nil {
		b.Fatal(err)
	}
	return u
}

func deepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

var benchShapes = []struct {
	name       string
	containers int
}{{"vllm", 1}, {"containers=20", 20}}

// BenchmarkScrapeTemplate: the pod template scraper on a Deployment's
// spec.template.
func BenchmarkScrapeTemplate(b *testing.B) {
	for _, shape := range benchShapes {
		b.Run(shape.name, func(b *testing.B) {
			u := deployment(b, shape.containers)
			template, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
			opts := podtemplate.Options{WorkloadAnnotations: u.GetAnnotations()}
			f, err := podtemplate.ScrapeTemplate(template, "spec.template", opts)
			if err != nil || len(f.Containers) != shape.containers || len(f.Redactions) == 0 {
				b.Fatalf("scrape: %+v, %v", f, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				f, err = podtemplate.ScrapeTemplate(template, "spec.template", opts)
			}
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkAppsScrape: the apps adapter's Scrape on a Deployment (what the
// reconciler calls, without the defensive DeepCopy it makes first).
func BenchmarkAppsScrape(b *testing.B) {
	a := apps.New()
	ctx := context.Background()
	for _, shape := range benchShapes {
		b.Run(shape.name, func(b *testing.B) {
			u := deployment(b, shape.containers)
			f, err := a.Scrape(ctx, u)
			if err != nil || len(f.Containers) != shape.containers || !strings.Contains(fmt.Sprint(f.Properties), apps.PropertyReplicas) {
				b.Fatalf("scrape: %+v, %v", f, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				f, err = a.Scrape(ctx, u)
			}
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
