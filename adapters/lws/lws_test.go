package lws

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// fixture decodes a YAML manifest from testdata the way the core receives it
// (numbers as int64).
func fixture(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	js, err := yaml.YAMLToJSON(b)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(js))
	return u
}

func ev(src adapter.Source, loc string) adapter.Evidence {
	return adapter.Evidence{Source: src, Locator: loc}
}

func props(kv ...string) []adapter.Property {
	var out []adapter.Property
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, adapter.Property{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

var scrapers = []adapter.Scraper{Scraper(), podtemplate.Scraper()}

func TestKinds(t *testing.T) {
	a := New()
	require.Equal(t, "lws", a.Name())
	ks := a.Kinds()
	require.Len(t, ks, 2)
	for _, k := range ks {
		require.NoError(t, k.Validate())
		require.Equal(t, adapter.RoleTracked, k.Role)
	}
	require.Equal(t, "leaderworkerset.x-k8s.io/v1, Resource=leaderworkersets", ks[0].GroupVersionResource().String())
	require.Equal(t, "disaggregatedset.x-k8s.io/v1, Kind=DisaggregatedSet", ks[1].GroupVersionKind().String())
	// The caller cannot change the adapter's declarations.
	ks[0].Versions[0] = "v9"
	require.Equal(t, "v1", a.Kinds()[0].Versions[0])
}

func TestScrapeFixtures(t *testing.T) {
	const (
		lt = "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0]"
		wt = "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0]"
		r0 = "spec.roles[0].spec.leaderWorkerTemplate.workerTemplate.spec.containers[0]"
		r1 = "spec.roles[1].spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0]"
	)
	tests := []struct {
		fixture string
		want    adapter.Findings
	}{
		{"leaderworkerset-leader-worker.yaml", adapter.Findings{
			Scrapers: scrapers,
			Containers: []adapter.Container{
				{Name: "vllm-leader", Image: "vllm/vllm-openai:v0.8.5", Group: "leader", Evidence: ev(adapter.SourceImageReference, lt+".image")},
				{Name: "vllm-worker", Image: "vllm/vllm-openai:v0.8.5", Group: "worker", Evidence: ev(adapter.SourceImageReference, wt+".image")},
			},
			Runtimes: []adapter.Runtime{
				{Name: "vllm", Version: "v0.8.5", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, lt+".image")},
				{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceContainerCommand, lt+".command[2](vllm.entrypoints.openai.api_server)")},
				{Name: "vllm", Version: "v0.8.5", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, wt+".image")},
			},
			Accelerators: []adapter.Accelerator{
				{Resource: "nvidia.com/gpu", Quantity: "8", Evidence: ev(adapter.SourceResourceRequest, lt+".resources.limits[nvidia.com/gpu]")},
				{Resource: "nvidia.com/gpu", Quantity: "8", Evidence: ev(adapter.SourceResourceRequest, wt+".resources.limits[nvidia.com/gpu]")},
			},
			Models: []adapter.Model{
				{Name: "meta-llama/Meta-Llama-3.1-405B-Instruct", Confidence: adapter.Declared,
					Evidence: ev(adapter.SourceContainerCommand, lt+".command[2](--model)")},
			},
			Properties: props("lws.replicas", "2", "lws.size", "2", "lws.startupPolicy", "LeaderCreated",
				"lws.restartPolicy", "RecreateGroupOnPodRestart", "lws.leaderTemplate", "leader-template"),
		}},
		{"leaderworkerset-worker-only.yaml", adapter.Findings{
			Scrapers: scrapers,
			// Scraped once, although leaders run it too.
			Containers: []adapter.Container{
				{Name: "sglang", Image: "lmsysorg/sglang:v0.4.6.post1-cu124", Group: "worker", Evidence: ev(adapter.SourceImageReference, wt+".image")},
			},
			Runtimes: []adapter.Runtime{
				{Name: "sglang", Version: "v0.4.6.post1-cu124", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, wt+".image")},
				{Name: "sglang", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceContainerCommand, wt+".command[2](sglang.launch_server)")},
			},
			Accelerators: []adapter.Accelerator{
				{Resource: "nvidia.com/gpu", Quantity: "8", Evidence: ev(adapter.SourceResourceRequest, wt+".resources.limits[nvidia.com/gpu]")},
			},
			Models: []adapter.Model{
				{Name: "deepseek-ai/DeepSeek-V3", Version: "main", Confidence: adapter.Declared,
					Evidence: ev(adapter.SourceWorkloadAnnotation, "metadata.annotations[model.aibom.dev/base]")},
				{Name: "DeepSeek-V3", Source: "/models/DeepSeek-V3", Confidence: adapter.Declared,
					Evidence: ev(adapter.SourceContainerArg, wt+".args[0](--model-path)")},
			},
			Data: []adapter.Data{
				{Name: "weights (volumeClaimTemplate)", Kind: "pvc", Confidence: adapter.Inferred,
					Evidence: ev(adapter.SourceVolumeSource, wt+".volumeMounts[0](/models)")},
			},
			Properties: props("lws.replicas", "1", "lws.size", "2", "lws.startupPolicy", "LeaderReady",
				"lws.restartPolicy", "RecreateGroupOnPodRestart", "lws.leaderTemplate", "worker-template"),
			Redactions: []adapter.Redaction{{Locator: wt + ".env[0](HF_TOKEN)", Reason: podtemplate.ReasonSecretName}},
		}},
		{"disaggregatedset.yaml", adapter.Findings{
			Scrapers: scrapers,
			Containers: []adapter.Container{
				{Name: "vllm", Image: "vllm/vllm-openai:v0.10.1", Group: "prefill", Evidence: ev(adapter.SourceImageReference, r0+".image")},
				{Name: "vllm", Image: "vllm/vllm-openai:v0.10.1", Group: "decode/leader", Evidence: ev(adapter.SourceImageReference, r1+".image")},
				{Name: "ray", Image: "rayproject/ray:2.44.1", Group: "decode/worker",
					Evidence: ev(adapter.SourceImageReference, "spec.roles[1].spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image")},
			},
			Runtimes: []adapter.Runtime{
				{Name: "vllm", Version: "v0.10.1", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, r0+".image")},
				{Name: "vllm", Version: "v0.10.1", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, r1+".image")},
				{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceContainerCommand, r1+".command[0](vllm)")},
				// A Ray image runs Ray (the platform), not Ray Serve.
				{Name: "ray", Platform: true, Confidence: adapter.Inferred,
					Evidence: ev(adapter.SourceImagePattern, "spec.roles[1].spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image")},
			},
			Models: []adapter.Model{
				{Name: "Qwen/Qwen3-32B", Confidence: adapter.Declared,
					Evidence: ev(adapter.SourceWorkloadAnnotation, "spec.roles[0].metadata.annotations[model.aibom.dev/base]")},
				{Name: "Qwen/Qwen3-32B", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, r0+".args[0](--model)")},
				{Name: "Qwen/Qwen3-32B", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceContainerCommand, r1+".command[2](vllm serve)")},
			},
			Accelerators: []adapter.Accelerator{
				{Resource: "nvidia.com/gpu", Quantity: "4", Evidence: ev(adapter.SourceResourceRequest, r0+".resources.limits[nvidia.com/gpu]")},
			},
			Data: []adapter.Data{
				{Name: "cache (hf-cache)", Kind: "pvc", Confidence: adapter.Inferred,
					Evidence: ev(adapter.SourceVolumeSource, r1+".volumeMounts[0](/root/.cache/huggingface)")},
			},
			Properties: props("disaggregatedset.slices", "1",
				"disaggregatedset.role.0.name", "prefill", "disaggregatedset.role.0.replicas", "2",
				"disaggregatedset.role.0.size", "1", "disaggregatedset.role.0.leaderTemplate", "worker-template",
				"disaggregatedset.role.1.name", "decode", "disaggregatedset.role.1.size", "2",
				"disaggregatedset.role.1.restartPolicy", "RecreateGroupOnPodRestart",
				"disaggregatedset.role.1.leaderTemplate", "leader-template", "disaggregatedset.role.1.scaling", "External"),
		}},
		{"disaggregatedset-inline.yaml", adapter.Findings{
			Scrapers: scrapers,
			Containers: []adapter.Container{
				{Name: "inference", Image: "ghcr.io/llm-d/llm-d:v0.2.0", Group: "prefill",
					Evidence: ev(adapter.SourceImageReference, "spec.roles[0].leaderWorkerTemplate.workerTemplate.spec.containers[0].image")},
				{Name: "inference", Image: "ghcr.io/llm-d/llm-d:v0.2.0", Group: "decode",
					Evidence: ev(adapter.SourceImageReference, "spec.roles[1].leaderWorkerTemplate.workerTemplate.spec.containers[0].image")},
			},
			Runtimes: []adapter.Runtime{
				{Name: "llm-d", Version: "v0.2.0", Confidence: adapter.Inferred,
					Evidence: ev(adapter.SourceImagePattern, "spec.roles[0].leaderWorkerTemplate.workerTemplate.spec.containers[0].image")},
				{Name: "llm-d", Version: "v0.2.0", Confidence: adapter.Inferred,
					Evidence: ev(adapter.SourceImagePattern, "spec.roles[1].leaderWorkerTemplate.workerTemplate.spec.containers[0].image")},
			},
			Models: []adapter.Model{
				{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared,
					Evidence: ev(adapter.SourceContainerArg, "spec.roles[0].leaderWorkerTemplate.workerTemplate.spec.containers[0].args[0](--model)")},
				{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared,
					Evidence: ev(adapter.SourceContainerArg, "spec.roles[1].leaderWorkerTemplate.workerTemplate.spec.containers[0].args[0](--model)")},
			},
			Properties: props(
				"disaggregatedset.role.0.name", "prefill", "disaggregatedset.role.0.replicas", "3",
				"disaggregatedset.role.0.size", "1", "disaggregatedset.role.0.leaderTemplate", "worker-template",
				"disaggregatedset.role.1.name", "decode", "disaggregatedset.role.1.replicas", "3",
				"disaggregatedset.role.1.size", "1", "disaggregatedset.role.1.leaderTemplate", "worker-template"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			obj := fixture(t, tt.fixture)
			f, err := New().Scrape(context.Background(), obj)
			require.NoError(t, err)
			require.Equal(t, tt.want, f)
			// Deterministic: the same object gives the same findings.
			again, err := New().Scrape(context.Background(), obj)
			require.NoError(t, err)
			require.Equal(t, f, again)
		})
	}
}

func TestNoSecretInFindings(t *testing.T) {
	const token = "hf_abcdefghijklmnopqrstuvwxyz0123456789AB" // in leaderworkerset-worker-only.yaml
	const key = "nvapi-0123456789abcdefghijABCDEFGHIJ_-xyz"
	obj := fixture(t, "leaderworkerset-worker-only.yaml")
	c := obj.Object["spec"].(map[string]any)["leaderWorkerTemplate"].(map[string]any)["workerTemplate"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	c["env"] = append(c["env"].([]any),
		map[string]any{"name": "NGC_API_KEY", "value": key},
		map[string]any{"name": "MODEL_NAME", "value": "https://user:" + key + "@example.com/m"})
	obj.Object["spec"].(map[string]any)["startupPolicy"] = key
	f, err := New().Scrape(context.Background(), obj)
	require.NoError(t, err)
	js, err := json.Marshal(f)
	require.NoError(t, err)
	require.NotContains(t, string(js), token)
	require.NotContains(t, string(js), "nvapi-")
	require.Contains(t, f.Redactions, adapter.Redaction{Locator: "spec.startupPolicy", Reason: podtemplate.ReasonToken})
	require.Contains(t, f.Redactions, adapter.Redaction{
		Locator: "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].env[1](NGC_API_KEY)", Reason: podtemplate.ReasonSecretName})
}

func lwsObject(spec any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
		"metadata": map[string]any{"name": "x"}, "spec": spec,
	}}
}

func dsObject(spec any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "disaggregatedset.x-k8s.io/v1", "kind": "DisaggregatedSet",
		"metadata": map[string]any{"name": "x"}, "spec": spec,
	}}
}

func lwt(m map[string]any) map[string]any { return map[string]any{"leaderWorkerTemplate": m} }

func TestScrapeRejects(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"nil", nil, "lws: no object"},
		{"nil object", &unstructured.Unstructured{}, "lws: no object"},
		{"other group", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "LeaderWorkerSet"}}, "not a tracked kind"},
		{"undeclared version", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "leaderworkerset.x-k8s.io/v1alpha1", "kind": "LeaderWorkerSet"}}, "not a tracked kind"},
		{"ds alpha version", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "disaggregatedset.x-k8s.io/v1alpha1", "kind": "DisaggregatedSet"}}, "not a tracked kind"},
		{"spec string", lwsObject("x"), "lws: LeaderWorkerSet x: spec: expected object, got string"},
		{"lwt list", lwsObject(map[string]any{"leaderWorkerTemplate": []any{}}), "spec.leaderWorkerTemplate: expected object, got list"},
		{"leader string", lwsObject(lwt(map[string]any{"leaderTemplate": "x"})), "spec.leaderWorkerTemplate.leaderTemplate: expected object, got string"},
		{"worker number", lwsObject(lwt(map[string]any{"workerTemplate": int64(1)})), "spec.leaderWorkerTemplate.workerTemplate: expected object, got number"},
		{"worker spec list", lwsObject(lwt(map[string]any{"workerTemplate": map[string]any{"spec": []any{}}})), "spec.leaderWorkerTemplate.workerTemplate.spec: expected object"},
		{"leader containers string", lwsObject(lwt(map[string]any{"leaderTemplate": map[string]any{"spec": map[string]any{"containers": "c"}}})),
			"spec.leaderWorkerTemplate.leaderTemplate.spec.containers: expected list, got string"},
		{"worker args map", lwsObject(lwt(map[string]any{"workerTemplate": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"args": map[string]any{}}}}}})),
			"spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].args"},
		{"worker image number", lwsObject(lwt(map[string]any{"workerTemplate": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": 1.5}}}}})),
			"spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image"},
		{"ds spec list", dsObject([]any{}), "lws: DisaggregatedSet x: spec: expected object, got list"},
		{"roles map", dsObject(map[string]any{"roles": map[string]any{}}), "spec.roles: expected list, got object"},
		{"role string", dsObject(map[string]any{"roles": []any{"prefill"}}), "spec.roles[0]: expected object, got string"},
		{"role null", dsObject(map[string]any{"roles": []any{nil}}), "spec.roles[0]: expected object, got null"},
		{"role no name", dsObject(map[string]any{"roles": []any{map[string]any{}}}), "spec.roles[0].name: expected a role name, got null"},
		{"role name number", dsObject(map[string]any{"roles": []any{map[string]any{"name": int64(1)}}}), "spec.roles[0].name: expected a role name, got number"},
		{"role spec string", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "spec": "x"}}}), "spec.roles[0].spec: expected object, got string"},
		{"role metadata list", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "metadata": []any{}}}}), "spec.roles[0].metadata: expected object, got list"},
		{"role annotations list", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "metadata": map[string]any{"annotations": []any{}}}}}),
			"spec.roles[0].metadata.annotations: expected object, got list"},
		{"role model annotation number", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "metadata": map[string]any{"annotations": map[string]any{"model.aibom.dev/x": int64(1)}}}}}),
			"spec.roles[0].metadata.annotations[model.aibom.dev/x]: expected string, got number"},
		{"role lwt string", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "spec": lwt(nil), "leaderWorkerTemplate": "ignored"}}}), ""},
		{"role spec lwt string", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "spec": map[string]any{"leaderWorkerTemplate": "x"}}}}),
			"spec.roles[0].spec.leaderWorkerTemplate: expected object, got string"},
		{"inline role worker list", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "leaderWorkerTemplate": map[string]any{"workerTemplate": []any{}}}}}),
			"spec.roles[0].leaderWorkerTemplate.workerTemplate: expected object, got list"},
		{"second role bad", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p"}, map[string]any{"name": true}}}), "spec.roles[1].name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New().Scrape(context.Background(), tt.obj)
			if tt.want == "" {
				// v1 shape wins: the inlined alpha field is not read.
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, adapter.Findings{}, f)
		})
	}
}

func TestScrapeTolerates(t *testing.T) {
	only := adapter.Findings{Scrapers: []adapter.Scraper{Scraper()}}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want adapter.Findings
	}{
		{"no spec", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet"}}, only},
		{"null spec", lwsObject(nil), only},
		{"null lwt", lwsObject(lwt(nil)), only},
		{"empty lwt", lwsObject(lwt(map[string]any{})), adapter.Findings{Scrapers: only.Scrapers, Properties: props("lws.leaderTemplate", "worker-template")}},
		{"null templates", lwsObject(lwt(map[string]any{"leaderTemplate": nil, "workerTemplate": nil})),
			adapter.Findings{Scrapers: only.Scrapers, Properties: props("lws.leaderTemplate", "worker-template")}},
		{"wrong scalar types", lwsObject(map[string]any{"replicas": "2", "startupPolicy": int64(1),
			"leaderWorkerTemplate": map[string]any{"size": 1.5, "restartPolicy": []any{}, "volumeClaimTemplates": "x"}}),
			adapter.Findings{Scrapers: only.Scrapers, Properties: props("lws.leaderTemplate", "worker-template")}},
		{"float numbers", lwsObject(map[string]any{"replicas": float64(3), "leaderWorkerTemplate": map[string]any{"size": float64(4)}}),
			adapter.Findings{Scrapers: only.Scrapers, Properties: props("lws.replicas", "3", "lws.size", "4", "lws.leaderTemplate", "worker-template")}},
		{"metadata string", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": "x"}}, only},
		{"annotation number", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
			"metadata": map[string]any{"annotations": map[string]any{"model.aibom.dev/x": int64(1)}}}}, only},
		{"ds no roles", dsObject(map[string]any{}), only},
		{"ds null roles", dsObject(map[string]any{"roles": nil, "slices": "2"}), only},
		{"ds role only name", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "spec": nil, "scaling": "x", "metadata": nil}}}),
			adapter.Findings{Scrapers: only.Scrapers, Properties: props("disaggregatedset.role.0.name", "p")}},
		{"ds scaling mode number", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "scaling": map[string]any{"mode": int64(1)}}}}),
			adapter.Findings{Scrapers: only.Scrapers, Properties: props("disaggregatedset.role.0.name", "p")}},
		{"ds other annotations ignored", dsObject(map[string]any{"roles": []any{map[string]any{"name": "p", "metadata": map[string]any{"annotations": map[string]any{"other": int64(1)}}}}}),
			adapter.Findings{Scrapers: only.Scrapers, Properties: props("disaggregatedset.role.0.name", "p")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New().Scrape(context.Background(), tt.obj)
			require.NoError(t, err)
			require.Equal(t, tt.want, f)
		})
	}
}

func TestScrapeHugeArrays(t *testing.T) {
	const n = 5000
	containers := make([]any, n)
	for i := range containers {
		containers[i] = map[string]any{"name": fmt.Sprintf("c%d", i), "image": "vllm/vllm-openai:v0.8.5", "args": []any{"--model", "m"}}
	}
	f, err := New().Scrape(context.Background(), lwsObject(lwt(map[string]any{"workerTemplate": map[string]any{"spec": map[string]any{"containers": containers}}})))
	require.NoError(t, err)
	require.Len(t, f.Containers, n)
	require.Len(t, f.Models, n)

	roles := make([]any, n)
	for i := range roles {
		roles[i] = map[string]any{"name": fmt.Sprintf("r%d", i), "spec": map[string]any{"replicas": int64(1)}}
	}
	roles = append(roles, map[string]any{"name": 7})
	_, err = New().Scrape(context.Background(), dsObject(map[string]any{"roles": roles}))
	require.ErrorContains(t, err, fmt.Sprintf("spec.roles[%d].name", n))
	f, err = New().Scrape(context.Background(), dsObject(map[string]any{"roles": roles[:n]}))
	require.NoError(t, err)
	require.Len(t, f.Properties, 2*n)
	require.True(t, strings.HasPrefix(f.Properties[2*n-1].Name, fmt.Sprintf("disaggregatedset.role.%d.", n-1)))
}

// FuzzScrape feeds arbitrary JSON objects, as each tracked kind, to Scrape:
// it must never panic, and must give the same result twice.
func FuzzScrape(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	require.NoError(f, err)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		require.NoError(f, err)
		js, err := yaml.YAMLToJSON(b)
		require.NoError(f, err)
		f.Add(js)
	}
	for _, seed := range []string{
		`{}`, `null`, `{"spec":null}`, `{"spec":{"leaderWorkerTemplate":{"leaderTemplate":{},"workerTemplate":{"spec":{"containers":[null]}}}}}`,
		`{"spec":{"roles":[{"name":"a","spec":{"leaderWorkerTemplate":{"workerTemplate":{"spec":{"containers":[{"image":"x","args":["--model"]}]}}}}},1]}}`,
		`{"metadata":{"annotations":{"model.aibom.dev/x":"hf_abcdefghijklmnopqrstuvwxyz0123456789"}},"spec":{"replicas":1e300}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		for _, k := range New().Kinds() {
			obj["apiVersion"] = k.Group + "/" + k.Versions[0]
			obj["kind"] = k.Kind
			u := &unstructured.Unstructured{Object: obj}
			first, err1 := New().Scrape(context.Background(), u)
			second, err2 := New().Scrape(context.Background(), u)
			require.Equal(t, err1, err2)
			require.Equal(t, first, second)
			if err1 != nil {
				require.Equal(t, adapter.Findings{}, first)
			}
		}
	})
}
