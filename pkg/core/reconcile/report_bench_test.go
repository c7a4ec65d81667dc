package reconcile

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// BenchmarkBuildReport: scrape through the apps adapter, digest resolution
// from the attributed pods, and the document, for a vLLM Deployment with one
// container and two running pods, and for one with 20 containers and 10 pods.
func BenchmarkBuildReport(b *testing.B) {
	reg, err := graph.NewRegistry(apps.New())
	if err != nil {
		b.Fatal(err)
	}
	entry, _ := reg.Lookup(coretest.DeployGVK.GroupKind())
	tool := document.Tool{Name: document.ToolName, Version: "v0.1.0"}
	for _, tc := range []struct {
		name             string
		containers, pods int
	}{{"small", 1, 2}, {"large", 20, 10}} {
		b.Run(tc.name, func(b *testing.B) {
			obj, desc := reportInput(tc.containers, tc.pods)
			rep := BuildReport(context.Background(), entry, obj, desc, tool, 512*1024)
			if rep.ScrapeErr != nil || rep.BuildErr != nil || rep.Status.Summary.Images != tc.containers {
				b.Fatalf("report: %+v", rep)
			}
			b.ReportAllocs()
			for b.Loop() {
				rep = BuildReport(context.Background(), entry, obj, desc, tool, 512*1024)
			}
			b.ReportMetric(float64(len(rep.Status.Document)), "doc-bytes")
		})
	}
}

// reportInput is a vLLM Deployment with the given number of containers
// (the first one vLLM) and its running pods.
func reportInput(containers, pods int) (*unstructured.Unstructured, graph.Descendants) {
	var cs, statuses []any
	for i := range containers {
		name, image := fmt.Sprintf("sidecar-%d", i), fmt.Sprintf("registry.example.com/tools/sidecar-%d:1.%d.0", i, i)
		args := []any{"--listen", fmt.Sprintf(":%d", 9000+i)}
		if i == 0 {
			name, image = "vllm", "vllm/vllm-openai:v0.6.3"
			args = []any{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--port", "8000", "--tensor-parallel-size", "2",
				"--max-model-len", "8192", "--gpu-memory-utilization", "0.9"}
		}
		cs = append(cs, map[string]any{
			"name": name, "image": image, "args": args,
			"env": []any{
				map[string]any{"name": "HF_TOKEN", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "hf", "key": "token"}}},
				map[string]any{"name": "HF_HOME", "value": "/root/.cache/huggingface"},
			},
			"volumeMounts": []any{map[string]any{"name": "cache", "mountPath": "/root/.cache/huggingface"}},
		})
		statuses = append(statuses, map[string]any{
			"name": name, "image": image, "ready": true,
			"imageID": fmt.Sprintf("%s@sha256:%064x", image, i+1),
		})
	}
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "llama", "namespace": "bench", "uid": "6f1c2b9e-3d4a-4e5f-8a7b-1c2d3e4f5a6b",
			"annotations": map[string]any{"model.aibom.dev/name": "meta-llama/Llama-3.1-8B-Instruct"}},
		"spec": map[string]any{
			"replicas": int64(pods),
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "llama"}},
				"spec": map[string]any{
					"containers": cs,
					"volumes":    []any{map[string]any{"name": "cache", "persistentVolumeClaim": map[string]any{"claimName": "llama-cache"}}},
				},
			},
		},
	}}
	var desc graph.Descendants
	for i := range pods {
		p := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": fmt.Sprintf("llama-7d9f8c6b5-%05d", i), "namespace": "bench"},
			"status":   map[string]any{"phase": "Running", "containerStatuses": runtime.DeepCopyJSONValue(statuses)},
		}}
		desc.Pods = append(desc.Pods, p)
	}
	return deploy, desc
}
