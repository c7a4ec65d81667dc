package apps

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// object decodes a YAML manifest the way the core receives it (numbers as
// int64).
func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(js))
	return u
}

const vllmDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
  namespace: ml
  annotations:
    model.aibom.dev/base: meta-llama/Llama-3.1-8B-Instruct
    deployment.kubernetes.io/revision: "3"
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
        ports: [{containerPort: 8000}]
        resources: {limits: {nvidia.com/gpu: "1"}}
        volumeMounts:
        - {name: cache, mountPath: /root/.cache/huggingface}
      volumes:
      - name: cache
        persistentVolumeClaim: {claimName: llama-cache}
`

func TestKinds(t *testing.T) {
	a := New()
	require.Equal(t, "apps", a.Name())
	ks := a.Kinds()
	require.Len(t, ks, 4)
	roles := map[string]adapter.Role{}
	for _, k := range ks {
		require.NoError(t, k.Validate())
		roles[k.String()] = k.Role
	}
	require.Equal(t, map[string]adapter.Role{
		"Deployment.apps": adapter.RoleTracked, "StatefulSet.apps": adapter.RoleTracked, "DaemonSet.apps": adapter.RoleTracked,
		"ReplicaSet.apps": adapter.RoleWalkOnly,
	}, roles, "Pod is the core's kind, not the apps adapter's")
	// The caller cannot change the adapter's declarations.
	ks[0].Versions[0] = "v9"
	require.Equal(t, "v1", a.Kinds()[0].Versions[0])
}

func TestScrapeDeployment(t *testing.T) {
	f, err := New().Scrape(context.Background(), object(t, vllmDeployment))
	require.NoError(t, err)
	const c0 = "spec.template.spec.containers[0]"
	require.Equal(t, adapter.Findings{
		Scrapers: []adapter.Scraper{podtemplate.Scraper()},
		Containers: []adapter.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.6.3",
			Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: c0 + ".image"}}},
		Runtimes: []adapter.Runtime{
			{Name: "vllm", Version: "v0.6.3", Confidence: adapter.Inferred,
				Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: c0 + ".image"}},
			{Name: "vllm", Confidence: adapter.Inferred,
				Evidence: adapter.Evidence{Source: adapter.SourceContainerCommand, Locator: c0 + ".command[2](vllm.entrypoints.openai.api_server)"}},
		},
		Accelerators: []adapter.Accelerator{{Resource: "nvidia.com/gpu", Quantity: "1",
			Evidence: adapter.Evidence{Source: adapter.SourceResourceRequest, Locator: c0 + ".resources.limits[nvidia.com/gpu]"}}},
		Models: []adapter.Model{
			{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared,
				Evidence: adapter.Evidence{Source: adapter.SourceWorkloadAnnotation, Locator: "metadata.annotations[model.aibom.dev/base]"}},
			{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared,
				Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: c0 + ".args[0](--model)"}},
		},
		Data: []adapter.Data{{Name: "cache (llama-cache)", Kind: "pvc", Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: c0 + ".volumeMounts[0](/root/.cache/huggingface)"}}},
		Properties: []adapter.Property{{Name: "k8s.replicas", Value: "2"}},
	}, f)
}

func TestScrapeStatefulSetAndDaemonSet(t *testing.T) {
	sts := object(t, `
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
        volumeMounts: [{name: data, mountPath: /data}, {name: weights, mountPath: /weights}]
  volumeClaimTemplates:
  - metadata: {name: weights}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 100Gi}}}
  - "garbage"
`)
	f, err := New().Scrape(context.Background(), sts)
	require.NoError(t, err)
	require.Equal(t, "tgi", f.Runtimes[0].Name)
	require.Equal(t, "bigscience/bloom-560m", f.Models[0].Name)
	require.Equal(t, []adapter.Data{{Name: "weights (volumeClaimTemplate)", Kind: "pvc", Confidence: adapter.Inferred,
		Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: "spec.template.spec.containers[0].volumeMounts[1](/weights)"}}}, f.Data)
	require.Equal(t, []adapter.Property{{Name: "k8s.replicas", Value: "1"}}, f.Properties)

	ds := object(t, `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ollama}
spec:
  template:
    spec:
      containers:
      - {name: ollama, image: "ollama/ollama:0.5.7"}
`)
	f, err = New().Scrape(context.Background(), ds)
	require.NoError(t, err)
	require.Equal(t, "ollama", f.Runtimes[0].Name)
	require.Empty(t, f.Properties)
}

func TestScrapeReplicas(t *testing.T) {
	for name, tt := range map[string]struct {
		replicas any
		want     []adapter.Property
	}{
		"int64":    {int64(3), []adapter.Property{{Name: "k8s.replicas", Value: "3"}}},
		"zero":     {int64(0), []adapter.Property{{Name: "k8s.replicas", Value: "0"}}},
		"float":    {float64(4), []adapter.Property{{Name: "k8s.replicas", Value: "4"}}},
		"int":      {5, []adapter.Property{{Name: "k8s.replicas", Value: "5"}}},
		"fraction": {1.5, nil},
		"string":   {"3", nil},
		"null":     {nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"spec": map[string]any{"replicas": tt.replicas},
			}}
			f, err := New().Scrape(context.Background(), u)
			require.NoError(t, err)
			require.Equal(t, tt.want, f.Properties)
		})
	}
}

func TestScrapeRejects(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"nil", nil, "apps: no object"},
		{"nil object", &unstructured.Unstructured{}, "apps: no object"},
		{"replicaset walk-only", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet"}}, "not a tracked kind"},
		{"pod walk-only", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}, "not a tracked kind"},
		{"other group", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job"}}, "not a tracked kind"},
		{"undeclared version", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1beta2", "kind": "Deployment"}}, "not a tracked kind"},
		{"no kind", &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}, "not a tracked kind"},
		{"spec string", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"}, "spec": "x"}},
			"apps: Deployment d: spec: expected object"},
		{"template list", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": []any{}}}},
			"spec.template: expected object"},
		{"containers string", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": "vllm"}}}}},
			"spec.template.spec.containers: expected list, got string"},
		{"args map", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet",
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"args": map[string]any{}}}}}}}},
			"spec.template.spec.containers[0].args"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New().Scrape(context.Background(), tt.obj)
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, adapter.Findings{}, f)
		})
	}
}

func TestScrapeTolerates(t *testing.T) {
	for name, obj := range map[string]map[string]any{
		"no spec":             {"apiVersion": "apps/v1", "kind": "Deployment"},
		"no template":         {"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{}},
		"null template":       {"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": nil}},
		"no containers":       {"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{}}}},
		"metadata string":     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": "x"},
		"annotations numbers": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"annotations": map[string]any{"model.aibom.dev/x": int64(1)}}},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := New().Scrape(context.Background(), &unstructured.Unstructured{Object: obj})
			require.NoError(t, err)
			require.Equal(t, adapter.Findings{Scrapers: []adapter.Scraper{podtemplate.Scraper()}}, f)
		})
	}
}
