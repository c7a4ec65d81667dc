package batch

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(js))
	return u
}

// readFile reads a fixture shared with the batchtest package.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestKinds(t *testing.T) {
	a := New()
	require.Equal(t, "batch", a.Name())
	ks := a.Kinds()
	require.Len(t, ks, 2)
	for _, k := range ks {
		require.NoError(t, k.Validate())
		require.Equal(t, adapter.RoleTracked, k.Role)
		require.Equal(t, "batch", k.Group)
	}
	require.Equal(t, "batch/v1, Resource=jobs", ks[0].GroupVersionResource().String())
	require.Equal(t, "batch/v1, Resource=cronjobs", ks[1].GroupVersionResource().String())
}

func TestScrapeJob(t *testing.T) {
	job := object(t, readFile(t, "batchtest/job.yaml"))
	f, err := New().Scrape(context.Background(), job)
	require.NoError(t, err)
	const tp = "spec.template.spec"
	require.Equal(t, []adapter.Scraper{podtemplate.Scraper()}, f.Scrapers)
	require.Equal(t, []adapter.Container{
		{Name: "download", Image: "python:3.12", Init: true, Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: tp + ".initContainers[0].image"}},
		{Name: "eval", Image: "vllm/vllm-openai:latest", Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: tp + ".containers[0].image"}},
	}, f.Containers)
	require.Equal(t, []adapter.Runtime{
		{Name: "vllm", Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: tp + ".containers[0].image"}},
		{Name: "vllm", Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceContainerCommand, Locator: tp + ".containers[0].command[0](vllm)"}},
	}, f.Runtimes)
	require.Equal(t, []adapter.Model{
		{Name: "mistralai/Mistral-7B-Instruct-v0.3", Version: "v0.3", Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceWorkloadAnnotation, Locator: "metadata.annotations[model.aibom.dev/eval]"}},
		{Name: "Qwen/Qwen2.5-72B", Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourcePodTemplateAnnotation, Locator: "spec.template.metadata.annotations[model.aibom.dev/judge]"}},
		{Name: "m", Source: "/models/m", Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: tp + ".containers[0].args[0](vllm serve)"}},
	}, f.Models)
	require.Equal(t, []adapter.Data{
		{Name: "m", Kind: "emptyDir", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: tp + ".initContainers[0].volumeMounts[0](/models)"}},
		{Name: "m", Kind: "emptyDir", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: tp + ".containers[0].volumeMounts[0](/models)"}},
	}, f.Data)
	require.Equal(t, []adapter.Property{{Name: "k8s.parallelism", Value: "2"}, {Name: "k8s.completions", Value: "4"}}, f.Properties)
}

func TestScrapeCronJob(t *testing.T) {
	cj := object(t, `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly-embed}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      parallelism: 3
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: embed
            image: ghcr.io/huggingface/text-embeddings-inference:1.5
            args: ["--model-id=BAAI/bge-large-en-v1.5"]
`)
	f, err := New().Scrape(context.Background(), cj)
	require.NoError(t, err)
	const c0 = "spec.jobTemplate.spec.template.spec.containers[0]"
	require.Equal(t, adapter.Findings{
		Scrapers: []adapter.Scraper{podtemplate.Scraper()},
		Containers: []adapter.Container{{Name: "embed", Image: "ghcr.io/huggingface/text-embeddings-inference:1.5",
			Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: c0 + ".image"}}},
		Runtimes: []adapter.Runtime{{Name: "tei", Version: "1.5", Confidence: adapter.Inferred,
			Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: c0 + ".image"}}},
		Models: []adapter.Model{{Name: "BAAI/bge-large-en-v1.5", Confidence: adapter.Declared,
			Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: c0 + ".args[0](--model-id)"}}},
		Properties: []adapter.Property{{Name: "k8s.schedule", Value: "0 2 * * *"}},
	}, f)
}

func TestScrapeRejects(t *testing.T) {
	job := func(spec any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"}, "spec": spec}}
	}
	cron := func(spec any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "c"}, "spec": spec}}
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"nil", nil, "batch: no object"},
		{"deployment", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}, "not a tracked kind"},
		{"v1beta1 cronjob", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1beta1", "kind": "CronJob"}}, "not a tracked kind"},
		{"job spec string", job("x"), "batch: Job j: spec: expected object"},
		{"job template string", job(map[string]any{"template": "x"}), "spec.template: expected object"},
		{"job containers map", job(map[string]any{"template": map[string]any{"spec": map[string]any{"containers": map[string]any{}}}}),
			"spec.template.spec.containers: expected list, got object"},
		{"cron jobTemplate list", cron(map[string]any{"jobTemplate": []any{}}), "batch: CronJob c: spec.jobTemplate: expected object"},
		{"cron jobTemplate spec string", cron(map[string]any{"jobTemplate": map[string]any{"spec": "x"}}), "spec.jobTemplate.spec: expected object"},
		{"cron template number", cron(map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": int64(1)}}}),
			"spec.jobTemplate.spec.template: expected object"},
		{"cron args map", cron(map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "args": map[string]any{"--model": "x"}}}}}}}}),
			"spec.jobTemplate.spec.template.spec.containers[0].args"},
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
	for name, tt := range map[string]struct {
		obj   map[string]any
		props []adapter.Property
	}{
		"job no spec":         {map[string]any{"apiVersion": "batch/v1", "kind": "Job"}, nil},
		"job bad counts":      {map[string]any{"apiVersion": "batch/v1", "kind": "Job", "spec": map[string]any{"parallelism": "2", "completions": 1.5}}, nil},
		"cron no jobTemplate": {map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "spec": map[string]any{"schedule": int64(5)}}, nil},
		"cron empty schedule": {map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "spec": map[string]any{"schedule": ""}}, nil},
		"cron null jobTemplate": {map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "spec": map[string]any{"schedule": "@daily", "jobTemplate": nil}},
			[]adapter.Property{{Name: "k8s.schedule", Value: "@daily"}}},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := New().Scrape(context.Background(), &unstructured.Unstructured{Object: tt.obj})
			require.NoError(t, err)
			require.Equal(t, adapter.Findings{Scrapers: []adapter.Scraper{podtemplate.Scraper()}, Properties: tt.props}, f)
		})
	}
}
