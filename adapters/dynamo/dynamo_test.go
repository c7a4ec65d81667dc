package dynamo

import (
	"context"
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

// decode decodes a YAML manifest the way the core receives it (numbers as
// int64).
func decode(t testing.TB, doc []byte) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(js))
	return u
}

func fixture(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	require.NoError(t, err)
	return decode(t, b)
}

func mustScrape(t testing.TB, obj *unstructured.Unstructured) adapter.Findings {
	t.Helper()
	f, err := New().Scrape(context.Background(), obj)
	require.NoError(t, err)
	return f
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
	require.Equal(t, "dynamo", a.Name())
	ks := a.Kinds()
	require.Len(t, ks, 2)
	for _, k := range ks {
		require.NoError(t, k.Validate())
		require.Equal(t, adapter.RoleTracked, k.Role)
		require.Equal(t, "nvidia.com", k.Group)
		require.Equal(t, []string{"v1beta1", "v1alpha1"}, k.Versions)
	}
	require.Equal(t, "DynamoGraphDeployment", ks[0].Kind)
	require.Equal(t, "dynamographdeployments", ks[0].Resource)
	require.Equal(t, "nvidia.com/v1beta1, Resource=dynamographdeployments", ks[0].GroupVersionResource().String())
	require.Equal(t, "DynamoComponentDeployment", ks[1].Kind)
	require.Equal(t, "dynamocomponentdeployments", ks[1].Resource)
	ks[0].Versions[0] = "v9"
	require.Equal(t, "v1beta1", a.Kinds()[0].Versions[0])
}

func TestScrapeVllmDisaggV1alpha1(t *testing.T) {
	const (
		fe  = "spec.services.Frontend"
		dec = "spec.services.VllmDecodeWorker"
		pre = "spec.services.VllmPrefillWorker"
		img = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"
	)
	main := []string{"main"}
	require.Equal(t, adapter.Findings{
		Scrapers: scrapers,
		Containers: []adapter.Container{
			{Name: "main", Image: img, PodNames: main, Group: "Frontend", Evidence: ev(adapter.SourceImageReference, fe+".extraPodSpec.mainContainer.image")},
			{Name: "wait-for-etcd", Image: "busybox:1.36", Init: true, Group: "VllmDecodeWorker", Evidence: ev(adapter.SourceImageReference, dec+".extraPodSpec.initContainers[0].image")},
			{Name: "main", Image: img, PodNames: main, Group: "VllmDecodeWorker", Evidence: ev(adapter.SourceImageReference, dec+".extraPodSpec.mainContainer.image")},
			{Name: "metrics-exporter", Image: "prom/statsd-exporter:v0.26.0", Group: "VllmDecodeWorker", Evidence: ev(adapter.SourceImageReference, dec+".extraPodSpec.containers[0].image")},
			{Name: "main", Image: img, PodNames: main, Group: "VllmPrefillWorker", Evidence: ev(adapter.SourceImageReference, pre+".extraPodSpec.mainContainer.image")},
		},
		Runtimes: []adapter.Runtime{
			// The frontend runs no engine: its image names the platform only.
			{Name: "dynamo", Version: "0.4.1", Platform: true, Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, fe+".extraPodSpec.mainContainer.image")},
			{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceContainerArg, dec+".extraPodSpec.mainContainer.args[0](dynamo.vllm)")},
			{Name: "dynamo", Version: "0.4.1", Platform: true, Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, dec+".extraPodSpec.mainContainer.image")},
			{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, dec+".extraPodSpec.mainContainer.image")},
			{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceContainerArg, pre+".extraPodSpec.mainContainer.args[0](dynamo.vllm)")},
			{Name: "dynamo", Version: "0.4.1", Platform: true, Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, pre+".extraPodSpec.mainContainer.image")},
			{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, pre+".extraPodSpec.mainContainer.image")},
		},
		Models: []adapter.Model{
			{Name: "Qwen/Qwen3-0.6B", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, dec+".extraPodSpec.mainContainer.args[0](--model)")},
			{Name: "Qwen/Qwen3-0.6B", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, pre+".extraPodSpec.mainContainer.args[0](--model)")},
		},
		Data: []adapter.Data{
			{Name: "model-cache", Kind: "pvc", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceVolumeSource, dec+".volumeMounts[0](/models)")},
		},
		Properties: props(
			"dynamo.component.0.name", "Frontend",
			"dynamo.component.0.type", "frontend",
			"dynamo.component.0.replicas", "1",
			"dynamo.component.1.name", "VllmDecodeWorker",
			"dynamo.component.1.type", "worker",
			"dynamo.component.1.subComponentType", "decode",
			"dynamo.component.1.replicas", "2",
			"dynamo.component.2.name", "VllmPrefillWorker",
			"dynamo.component.2.type", "worker",
			"dynamo.component.2.subComponentType", "prefill",
			"dynamo.component.2.replicas", "1",
		),
		Redactions: []adapter.Redaction{{Locator: dec + ".envs[1](HF_TOKEN)", Reason: podtemplate.ReasonSecretName}},
	}, mustScrape(t, fixture(t, "vllm-disagg-v1alpha1")))
}

func TestScrapeVllmDisaggV1beta1(t *testing.T) {
	const img = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"
	c := func(i, j int) string { return fmt.Sprintf("spec.components[%d].podTemplate.spec.containers[%d]", i, j) }
	main := []string{"main"}
	require.Equal(t, adapter.Findings{
		Scrapers: scrapers,
		Containers: []adapter.Container{
			{Name: "main", Image: img, PodNames: main, Group: "Frontend", Evidence: ev(adapter.SourceImageReference, c(0, 0)+".image")},
			{Name: "main", Image: img, PodNames: main, Group: "VllmDecodeWorker", Evidence: ev(adapter.SourceImageReference, c(1, 0)+".image")},
			{Name: "metrics-exporter", Image: "prom/statsd-exporter:v0.26.0", Group: "VllmDecodeWorker", Evidence: ev(adapter.SourceImageReference, c(1, 1)+".image")},
			{Name: "main", Image: img, PodNames: main, Group: "VllmPrefillWorker", Evidence: ev(adapter.SourceImageReference, c(2, 0)+".image")},
		},
		// backendFramework is declared once; no detection then.
		Runtimes: []adapter.Runtime{
			{Name: "vllm", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.backendFramework")},
			{Name: "dynamo", Version: "0.4.1", Platform: true, Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, c(0, 0)+".image")},
			{Name: "dynamo", Version: "0.4.1", Platform: true, Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, c(1, 0)+".image")},
			{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, c(1, 0)+".image")},
			{Name: "dynamo", Version: "0.4.1", Platform: true, Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, c(2, 0)+".image")},
			{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, c(2, 0)+".image")},
		},
		// The decode worker's --model names its modelRef: only the CRD field
		// is kept. The prefill worker has no modelRef.
		Models: []adapter.Model{
			{Name: "Qwen/Qwen3-0.6B", Version: "c1899de289a04d12100db370d81485cdf75e47ca", Confidence: adapter.Declared,
				Evidence: ev(adapter.SourceCRDField, "spec.components[1].modelRef.name")},
			{Name: "Qwen/Qwen3-0.6B", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, c(2, 0)+".args[0](--model)")},
		},
		Data: []adapter.Data{
			{Name: "model-cache (model-cache)", Kind: "pvc", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceVolumeSource, c(1, 0)+".volumeMounts[0](/models)")},
		},
		Accelerators: []adapter.Accelerator{
			{Resource: "nvidia.com/gpu", Quantity: "1", Evidence: ev(adapter.SourceResourceRequest, c(1, 0)+".resources.limits[nvidia.com/gpu]")},
		},
		Properties: props(
			"dynamo.backendFramework", "vllm",
			"dynamo.component.0.name", "Frontend",
			"dynamo.component.0.type", "frontend",
			"dynamo.component.0.replicas", "1",
			"dynamo.component.1.name", "VllmDecodeWorker",
			"dynamo.component.1.type", "decode",
			"dynamo.component.1.replicas", "2",
			"dynamo.component.2.name", "VllmPrefillWorker",
			"dynamo.component.2.type", "prefill",
			"dynamo.component.2.replicas", "1",
		),
	}, mustScrape(t, fixture(t, "vllm-disagg-v1beta1")))
}

// Compact renderings for the table below.
func runtimes(f adapter.Findings) []string {
	var out []string
	for _, r := range f.Runtimes {
		out = append(out, strings.Join([]string{r.Name, r.Version, string(r.Confidence), string(r.Evidence.Source), r.Evidence.Locator}, " | "))
	}
	return out
}

func models(f adapter.Findings) []string {
	var out []string
	for _, m := range f.Models {
		out = append(out, strings.Join([]string{m.Name, m.Version, string(m.Confidence), string(m.Evidence.Source), m.Evidence.Locator}, " | "))
	}
	return out
}

func containers(f adapter.Findings) []string {
	var out []string
	for _, c := range f.Containers {
		out = append(out, fmt.Sprintf("%s | %s | init=%t | pod=%s | %s | %s", c.Name, c.Group, c.Init, strings.Join(c.PodNames, ","), c.Image, c.Evidence.Locator))
	}
	return out
}

func TestScrapeFixtures(t *testing.T) {
	tests := []struct {
		fixture    string
		containers []string
		runtimes   []string
		models     []string
		properties []adapter.Property
	}{
		{
			fixture: "dcd-v1alpha1",
			containers: []string{
				"main | VllmDecodeWorker | init=false | pod=main | nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1 | spec.extraPodSpec.mainContainer.image",
			},
			runtimes: []string{
				"vllm |  | declared | crd_field | spec.backendFramework",
				"dynamo | 0.4.1 | inferred | image_pattern | spec.extraPodSpec.mainContainer.image", "vllm |  | inferred | image_pattern | spec.extraPodSpec.mainContainer.image",
			},
			models: []string{
				"Qwen/Qwen3-0.6B |  | declared | container_arg | spec.extraPodSpec.mainContainer.args[0](--model)",
				"Qwen/Qwen3-0.6B |  | inferred | env_var | spec.envs[0](MODEL_NAME)",
			},
			properties: props(
				"dynamo.backendFramework", "vllm",
				"dynamo.component.0.name", "VllmDecodeWorker",
				"dynamo.component.0.type", "worker",
				"dynamo.component.0.subComponentType", "decode",
				"dynamo.component.0.replicas", "2",
			),
		},
		{
			fixture: "dcd-v1beta1",
			containers: []string{
				"main | decode | init=false | pod=main | nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1 | spec.podTemplate.spec.containers[0].image",
			},
			runtimes: []string{
				"vllm |  | inferred | container_command | spec.podTemplate.spec.containers[0].command[2](dynamo.vllm)",
				"dynamo | 0.4.1 | inferred | image_pattern | spec.podTemplate.spec.containers[0].image", "vllm |  | inferred | image_pattern | spec.podTemplate.spec.containers[0].image",
			},
			models: []string{
				"meta-llama/Llama-3.1-405B-Instruct |  | declared | container_arg | spec.podTemplate.spec.containers[0].args[0](--model)", "meta-llama/Llama-3.1-405B-Instruct |  | inferred | env_var | spec.podTemplate.spec.containers[0].env[0](MODEL)",
			},
			properties: props(
				"dynamo.component.0.name", "decode",
				"dynamo.component.0.type", "decode",
				"dynamo.component.0.replicas", "1",
				"dynamo.component.0.nodeCount", "2",
			),
		},
		{
			fixture: "sglang-agg-v1beta1",
			containers: []string{
				"main | Frontend | init=false | pod=main | nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.1 | spec.components[0].podTemplate.spec.containers[0].image",
				"main | decode | init=false | pod=main | nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.1 | spec.components[1].podTemplate.spec.containers[0].image",
			},
			runtimes: []string{
				"dynamo | 0.4.1 | inferred | image_pattern | spec.components[0].podTemplate.spec.containers[0].image",
				"sglang |  | inferred | container_arg | spec.components[1].podTemplate.spec.containers[0].args[1](dynamo.sglang)",
				"dynamo | 0.4.1 | inferred | image_pattern | spec.components[1].podTemplate.spec.containers[0].image", "sglang |  | inferred | image_pattern | spec.components[1].podTemplate.spec.containers[0].image",
			},
			models: []string{
				"deepseek-ai/DeepSeek-R1-Distill-Llama-8B |  | declared | container_arg | spec.components[1].podTemplate.spec.containers[0].args[2](--model-path)",
			},
			properties: props(
				"dynamo.component.0.name", "Frontend",
				"dynamo.component.0.type", "frontend",
				"dynamo.component.1.name", "decode",
				"dynamo.component.1.type", "worker",
				"dynamo.component.1.replicas", "1",
			),
		},
		{
			fixture: "trtllm-multinode-v1alpha1",
			containers: []string{
				"main | Frontend | init=false | pod=main | nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.4.1 | spec.services.Frontend.extraPodSpec.mainContainer.image",
				"trtllm | TRTLLMWorker | init=false | pod=main | nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.4.1 | spec.services.TRTLLMWorker.extraPodSpec.mainContainer.image",
			},
			runtimes: []string{
				"tensorrt-llm |  | declared | crd_field | spec.backendFramework",
				"dynamo | 0.4.1 | inferred | image_pattern | spec.services.Frontend.extraPodSpec.mainContainer.image",
				"dynamo | 0.4.1 | inferred | image_pattern | spec.services.TRTLLMWorker.extraPodSpec.mainContainer.image", "tensorrt-llm |  | inferred | image_pattern | spec.services.TRTLLMWorker.extraPodSpec.mainContainer.image",
			},
			models: []string{
				"nvidia/Llama-3.1-8B-Instruct-FP8 |  | inferred | env_var | spec.envs[0](HF_MODEL_ID)",
				"meta-llama/Llama-3.1-8B-Instruct |  | declared | pod_template_annotation | spec.services.TRTLLMWorker.extraPodMetadata.annotations[model.aibom.dev/base]",
				"nvidia/Llama-3.1-8B-Instruct-FP8 |  | declared | container_arg | spec.services.TRTLLMWorker.extraPodSpec.mainContainer.args[0](--model-path)",
			},
			properties: props(
				"dynamo.backendFramework", "trtllm",
				"dynamo.component.0.name", "Frontend",
				"dynamo.component.0.type", "frontend",
				"dynamo.component.1.name", "TRTLLMWorker",
				"dynamo.component.1.type", "worker",
				"dynamo.component.1.replicas", "1",
				"dynamo.component.1.nodeCount", "2",
			),
		},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			f := mustScrape(t, fixture(t, tt.fixture))
			require.Equal(t, scrapers, f.Scrapers)
			require.Equal(t, tt.containers, containers(f))
			require.Equal(t, tt.runtimes, runtimes(f))
			require.Equal(t, tt.models, models(f))
			require.Equal(t, tt.properties, f.Properties)
		})
	}
}

// fixtures lists every manifest in testdata.
func fixtures(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return names
}

func TestDeterministic(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			first := mustScrape(t, fixture(t, name))
			require.NotEmpty(t, first.Containers)
			for range 20 { // map iteration order changes between runs
				require.Equal(t, first, mustScrape(t, fixture(t, name)))
			}
		})
	}
}

func TestScrapeDoesNotModifyObject(t *testing.T) {
	for _, name := range fixtures(t) {
		obj := fixture(t, name)
		before := obj.DeepCopy()
		mustScrape(t, obj)
		require.Equal(t, before, obj, name)
	}
}

func TestDetectBackend(t *testing.T) {
	const c = "c"
	tests := []struct {
		name          string
		command, args []string
		want          string // "name | source | locator", empty for none
	}{
		{"sh -c script", []string{"/bin/sh", "-c"}, []string{"python3 -m dynamo.vllm --model m"}, "vllm | container_arg | c.args[0](dynamo.vllm)"},
		{"exec form", []string{"python3", "-m", "dynamo.sglang"}, []string{"--model-path", "m"}, "sglang | container_command | c.command[2](dynamo.sglang)"},
		{"split", []string{"python"}, []string{"-m", "dynamo.trtllm"}, "tensorrt-llm | container_arg | c.args[1](dynamo.trtllm)"},
		{"versioned python", nil, []string{"python3.12 -u -m dynamo.vllm.main"}, "vllm | container_arg | c.args[0](dynamo.vllm)"},
		{"after a cd", []string{"bash", "-c"}, []string{"cd /workspace && python3 -m dynamo.sglang --tp 2"}, "sglang | container_arg | c.args[0](dynamo.sglang)"},
		{"frontend", []string{"python3", "-m", "dynamo.frontend"}, nil, ""},
		{"no -m", []string{"python3", "dynamo.vllm"}, nil, ""},
		{"no python", []string{"dynamo-run", "-m", "dynamo.vllm"}, nil, ""},
		{"pipe breaks it", nil, []string{"python3 x | -m dynamo.vllm"}, ""},
		{"ambiguous", nil, []string{"python3 -m dynamo.vllm; python3 -m dynamo.sglang"}, ""},
		{"empty", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := DetectBackend(tt.command, tt.args, c)
			if tt.want == "" {
				require.False(t, ok)
				return
			}
			require.True(t, ok)
			require.Equal(t, adapter.Inferred, r.Confidence)
			require.Empty(t, r.Version)
			require.Equal(t, tt.want, r.Name+" | "+string(r.Evidence.Source)+" | "+r.Evidence.Locator)
		})
	}
}

func TestRuntimeName(t *testing.T) {
	for in, want := range map[string]string{"vllm": "vllm", "sglang": "sglang", "trtllm": "tensorrt-llm", "noop": "", "VLLM": "", "": ""} {
		got, ok := RuntimeName(in)
		require.Equal(t, want != "", ok, in)
		require.Equal(t, want, got, in)
	}
}

// graph builds an object of the given apiVersion and kind around spec.
func graph(apiVersion, kind string, spec any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "g"},
		"spec":     spec,
	}}
}

const (
	alpha = "nvidia.com/v1alpha1"
	beta  = "nvidia.com/v1beta1"
	dgd   = "DynamoGraphDeployment"
	dcd   = "DynamoComponentDeployment"
)

func TestBackendDetection(t *testing.T) {
	worker := func(ctype string) map[string]any {
		return map[string]any{
			"componentType": ctype,
			"extraPodSpec": map[string]any{"mainContainer": map[string]any{
				"image": "example.com/custom:1", "command": []any{"python3", "-m", "dynamo.vllm"},
			}},
		}
	}
	for _, tt := range []struct {
		ctype string
		want  []string
	}{
		{"worker", []string{"vllm |  | inferred | container_command | spec.services.w.extraPodSpec.mainContainer.command[2](dynamo.vllm)"}},
		{"prefill", []string{"vllm |  | inferred | container_command | spec.services.w.extraPodSpec.mainContainer.command[2](dynamo.vllm)"}},
		{"decode", []string{"vllm |  | inferred | container_command | spec.services.w.extraPodSpec.mainContainer.command[2](dynamo.vllm)"}},
		{"frontend", nil},
		{"planner", nil},
		{"", nil},
	} {
		t.Run(tt.ctype, func(t *testing.T) {
			f := mustScrape(t, graph(alpha, dgd, map[string]any{"services": map[string]any{"w": worker(tt.ctype)}}))
			require.Equal(t, tt.want, runtimes(f))
		})
	}

	// An unknown backendFramework is recorded but is no runtime; detection
	// still applies, since nothing valid was declared.
	f := mustScrape(t, graph(alpha, dgd, map[string]any{"backendFramework": "noop", "services": map[string]any{"w": worker("worker")}}))
	require.Equal(t, []string{"vllm |  | inferred | container_command | spec.services.w.extraPodSpec.mainContainer.command[2](dynamo.vllm)"}, runtimes(f))
	require.Equal(t, props("dynamo.backendFramework", "noop", "dynamo.component.0.name", "w", "dynamo.component.0.type", "worker"), f.Properties)

	// A declared framework disables detection, even when they disagree.
	f = mustScrape(t, graph(alpha, dgd, map[string]any{"backendFramework": "sglang", "services": map[string]any{"w": worker("worker")}}))
	require.Equal(t, []string{"sglang |  | declared | crd_field | spec.backendFramework"}, runtimes(f))
}

func TestServiceKeysInLocators(t *testing.T) {
	svc := func(image string) map[string]any {
		return map[string]any{"extraPodSpec": map[string]any{"mainContainer": map[string]any{"image": image}}}
	}
	f := mustScrape(t, graph(alpha, dgd, map[string]any{"services": map[string]any{
		"b.worker": svc("b:1"), "a_w-1": svc("a:1"), "c w": svc("c:1"), "": svc("e:1"),
	}}))
	require.Equal(t, []string{
		"main |  | init=false | pod=main | e:1 | spec.services[].extraPodSpec.mainContainer.image",
		"main | a_w-1 | init=false | pod=main | a:1 | spec.services.a_w-1.extraPodSpec.mainContainer.image",
		"main | b.worker | init=false | pod=main | b:1 | spec.services[b.worker].extraPodSpec.mainContainer.image",
		"main | c w | init=false | pod=main | c:1 | spec.services[c w].extraPodSpec.mainContainer.image",
	}, containers(f))
}

func TestModelRef(t *testing.T) {
	comp := func(args ...any) map[string]any {
		return map[string]any{
			"name": "w", "type": "worker",
			"modelRef": map[string]any{"name": " Qwen/Qwen3-8B "},
			"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "main", "image": "x:1", "args": args},
			}}},
		}
	}
	// Same model: only the CRD field. A different name is another fact.
	f := mustScrape(t, graph(beta, dgd, map[string]any{"components": []any{comp("--model", "Qwen/Qwen3-8B", "--served-model-name", "qwen")}}))
	require.Equal(t, []string{
		"Qwen/Qwen3-8B |  | declared | crd_field | spec.components[0].modelRef.name",
	}, models(f))

	// Credentials in a modelRef are masked and the masking recorded.
	f = mustScrape(t, graph(alpha, dcd, map[string]any{"modelRef": map[string]any{"name": "https://user:pw@models.example.com/llama"}}))
	require.Equal(t, []string{"https://REDACTED@models.example.com/llama |  | declared | crd_field | spec.modelRef.name"}, models(f))
	require.Equal(t, []adapter.Redaction{{Locator: "spec.modelRef.name", Reason: podtemplate.ReasonURLCredentials}}, f.Redactions)

	// An empty name is no model.
	f = mustScrape(t, graph(beta, dcd, map[string]any{"name": "w", "modelRef": map[string]any{"name": "", "revision": "main"}}))
	require.Empty(t, f.Models)
}

func TestWorkloadAnnotationsReadOnce(t *testing.T) {
	obj := fixture(t, "vllm-disagg-v1beta1")
	obj.SetAnnotations(map[string]string{"model.aibom.dev/base": "Qwen/Qwen3-0.6B-Base@main", "model.aibom.dev/api-token": "secret"})
	f := mustScrape(t, obj)
	require.Equal(t, []string{
		"Qwen/Qwen3-0.6B-Base | main | declared | workload_annotation | metadata.annotations[model.aibom.dev/base]",
		"Qwen/Qwen3-0.6B | c1899de289a04d12100db370d81485cdf75e47ca | declared | crd_field | spec.components[1].modelRef.name",
		"Qwen/Qwen3-0.6B |  | declared | container_arg | spec.components[2].podTemplate.spec.containers[0].args[0](--model)",
	}, models(f))
	require.Equal(t, []adapter.Redaction{{Locator: "metadata.annotations[model.aibom.dev/api-token]", Reason: podtemplate.ReasonSecretName}}, f.Redactions)
}

func TestEnvExpansion(t *testing.T) {
	env := func(kv ...string) []any {
		var out []any
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, map[string]any{"name": kv[i], "value": kv[i+1]})
		}
		return out
	}
	mc := func(containerEnv []any) map[string]any {
		return map[string]any{"image": "x:1", "args": []any{"--model", "$(MODEL)"}, "env": containerEnv}
	}
	const loc = "spec.services.w.extraPodSpec.mainContainer.args[0](--model)"
	for _, tt := range []struct {
		name                   string
		graphEnv, svcEnv, cEnv []any
		want                   []string
	}{
		{"unresolved", nil, nil, nil, nil},
		{"graph", env("MODEL", "g/m"), nil, nil, []string{"g/m |  | declared | container_arg | " + loc}},
		{"service wins over graph", env("MODEL", "g/m"), env("MODEL", "s/m"), nil, []string{"s/m |  | declared | container_arg | " + loc}},
		{"container wins", env("MODEL", "g/m"), env("MODEL", "s/m"), env("MODEL", "c/m"), []string{"c/m |  | declared | container_arg | " + loc,
			// The container's own model env names the same model (one component in the document).
			"c/m |  | inferred | env_var | spec.services.w.extraPodSpec.mainContainer.env[0](MODEL)"}},
		{"secret names are not read", env("MODEL_TOKEN", "x"), nil, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := map[string]any{"envs": tt.graphEnv, "services": map[string]any{"w": map[string]any{
				"envs": tt.svcEnv, "extraPodSpec": map[string]any{"mainContainer": mc(tt.cEnv)},
			}}}
			f := mustScrape(t, graph(alpha, dgd, spec))
			require.Equal(t, tt.want, models(f))
		})
	}

	// v1beta1: the graph's spec.env expands the main container's args.
	f := mustScrape(t, graph(beta, dgd, map[string]any{"env": env("MODEL", "g/m"), "components": []any{map[string]any{
		"name": "w", "podTemplate": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "main", "image": "x:1", "args": []any{"--model=$(MODEL)"}},
		}}},
	}}}))
	require.Equal(t, []string{"g/m |  | declared | container_arg | spec.components[0].podTemplate.spec.containers[0].args[0](--model)"}, models(f))
}

func TestDCDNameFallsBackToObjectName(t *testing.T) {
	for _, apiVersion := range []string{alpha, beta} {
		f := mustScrape(t, graph(apiVersion, dcd, map[string]any{}))
		require.Equal(t, props("dynamo.component.0.name", "g"), f.Properties, apiVersion)
	}
}

func TestScrapeRejects(t *testing.T) {
	obj := graph
	mainC := func(c map[string]any) map[string]any {
		return map[string]any{"services": map[string]any{"w": map[string]any{"extraPodSpec": map[string]any{"mainContainer": c}}}}
	}
	betaC := func(c any) map[string]any {
		return map[string]any{"components": []any{map[string]any{"name": "w", "podTemplate": map[string]any{"spec": map[string]any{"containers": []any{c}}}}}}
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"nil", nil, "dynamo: no object"},
		{"nil object", &unstructured.Unstructured{}, "dynamo: no object"},
		{"other group", obj("apps/v1", "Deployment", nil), "not a tracked kind"},
		{"other kind", obj(alpha, "DynamoModel", nil), "not a tracked kind"},
		{"other version", obj("nvidia.com/v2", dgd, nil), "not a tracked kind"},
		{"spec string", obj(alpha, dgd, "x"), "dynamo: DynamoGraphDeployment g: spec: expected object, got string"},
		{"services list", obj(alpha, dgd, map[string]any{"services": []any{}}), "spec.services: expected object, got list"},
		{"service string", obj(alpha, dgd, map[string]any{"services": map[string]any{"w": "x"}}), "spec.services.w: expected object, got string"},
		{"components map", obj(beta, dgd, map[string]any{"components": map[string]any{}}), "spec.components: expected list, got object"},
		{"component null", obj(beta, dgd, map[string]any{"components": []any{nil}}), "spec.components[0]: expected object, got null"},
		{"component no name", obj(beta, dgd, map[string]any{"components": []any{map[string]any{"type": "worker"}}}), "spec.components[0].name: missing"},
		{"component name number", obj(beta, dgd, map[string]any{"components": []any{map[string]any{"name": int64(1)}}}), "spec.components[0].name: expected string, got number"},
		{"backendFramework list", obj(beta, dcd, map[string]any{"backendFramework": []any{"vllm"}}), "spec.backendFramework: expected string, got list"},
		{"replicas string", obj(alpha, dcd, map[string]any{"replicas": "2"}), "spec.replicas: expected integer, got string"},
		{"replicas fraction", obj(alpha, dcd, map[string]any{"replicas": 1.5}), "spec.replicas: expected integer, got number"},
		{"nodeCount bool", obj(beta, dcd, map[string]any{"multinode": map[string]any{"nodeCount": true}}), "spec.multinode.nodeCount: expected integer, got boolean"},
		{"multinode list", obj(beta, dcd, map[string]any{"multinode": []any{}}), "spec.multinode: expected object, got list"},
		{"type number", obj(beta, dcd, map[string]any{"type": int64(3)}), "spec.type: expected string, got number"},
		{"componentType map", obj(alpha, dcd, map[string]any{"componentType": map[string]any{}}), "spec.componentType: expected string, got object"},
		{"serviceName number", obj(alpha, dcd, map[string]any{"serviceName": int64(3)}), "spec.serviceName: expected string, got number"},
		{"modelRef string", obj(alpha, dcd, map[string]any{"modelRef": "Qwen"}), "spec.modelRef: expected object, got string"},
		{"modelRef name list", obj(beta, dcd, map[string]any{"modelRef": map[string]any{"name": []any{}}}), "spec.modelRef.name: expected string, got list"},
		{"modelRef revision number", obj(beta, dcd, map[string]any{"modelRef": map[string]any{"name": "m", "revision": int64(1)}}), "spec.modelRef.revision: expected string, got number"},
		{"extraPodSpec list", obj(alpha, dcd, map[string]any{"extraPodSpec": []any{}}), "spec.extraPodSpec: expected object, got list"},
		{"mainContainer string", obj(alpha, dcd, map[string]any{"extraPodSpec": map[string]any{"mainContainer": "x"}}), "spec.extraPodSpec.mainContainer: expected object, got string"},
		{"image number", obj(alpha, dgd, mainC(map[string]any{"image": int64(7)})), "spec.services.w.extraPodSpec.mainContainer.image"},
		{"args objects", obj(alpha, dgd, mainC(map[string]any{"args": []any{"--model", map[string]any{}}})), "spec.services.w.extraPodSpec.mainContainer.args"},
		{"args map", obj(alpha, dgd, mainC(map[string]any{"args": map[string]any{}})), "spec.services.w.extraPodSpec.mainContainer.args"},
		{"command number", obj(alpha, dgd, mainC(map[string]any{"command": int64(1)})), "spec.services.w.extraPodSpec.mainContainer.command"},
		{"sidecars map", obj(alpha, dcd, map[string]any{"extraPodSpec": map[string]any{"containers": map[string]any{}}}), "spec.extraPodSpec.containers: expected list, got object"},
		{"init container string", obj(alpha, dcd, map[string]any{"extraPodSpec": map[string]any{"initContainers": []any{"x"}}}), "spec.extraPodSpec.initContainers[0]: expected object, got string"},
		{"volumes object", obj(alpha, dcd, map[string]any{"extraPodSpec": map[string]any{"volumes": map[string]any{}}}), "spec.extraPodSpec.volumes: expected list, got object"},
		{"envs object", obj(alpha, dcd, map[string]any{"envs": map[string]any{}}), "spec.envs: expected list, got object"},
		{"env entry string", obj(alpha, dgd, map[string]any{"envs": []any{"A=b"}}), "spec.envs[0]: expected object, got string"},
		{"env value number", obj(beta, dgd, map[string]any{"env": []any{map[string]any{"name": "A", "value": int64(1)}}}), "spec.env[0].value: expected string, got number"},
		{"volumeMounts entry list", obj(alpha, dcd, map[string]any{"volumeMounts": []any{[]any{}}}), "spec.volumeMounts[0]: expected object, got list"},
		{"mountPoint number", obj(alpha, dcd, map[string]any{"volumeMounts": []any{map[string]any{"name": "v", "mountPoint": int64(1)}}}), "spec.volumeMounts[0].mountPoint: expected string, got number"},
		{"annotations list", obj(alpha, dcd, map[string]any{"extraPodMetadata": map[string]any{"annotations": []any{}}}), "spec.extraPodMetadata.annotations: expected object, got list"},
		{"model annotation number", obj(alpha, dcd, map[string]any{"extraPodMetadata": map[string]any{"annotations": map[string]any{"model.aibom.dev/x": int64(1)}}}), "spec.extraPodMetadata.annotations[model.aibom.dev/x]: expected string, got number"},
		{"podTemplate list", obj(beta, dcd, map[string]any{"podTemplate": []any{}}), "spec.podTemplate: expected object, got list"},
		{"beta containers map", obj(beta, dgd, map[string]any{"components": []any{map[string]any{"name": "w", "podTemplate": map[string]any{"spec": map[string]any{"containers": map[string]any{}}}}}}), "spec.components[0].podTemplate.spec.containers: expected list"},
		{"beta container null", obj(beta, dgd, betaC(nil)), "spec.components[0].podTemplate.spec.containers[0]: expected object, got null"},
		{"beta main args objects", obj(beta, dgd, betaC(map[string]any{"name": "main", "args": []any{map[string]any{}}})), "spec.components[0].podTemplate.spec.containers[0].args"},
		{"beta main image list", obj(beta, dgd, betaC(map[string]any{"name": "main", "image": []any{}})), "spec.components[0].podTemplate.spec.containers[0].image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f adapter.Findings
			var err error
			require.NotPanics(t, func() { f, err = New().Scrape(context.Background(), tt.obj) })
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, adapter.Findings{}, f)
		})
	}
}

func TestScrapeTolerates(t *testing.T) {
	for name, obj := range map[string]*unstructured.Unstructured{
		"no spec":          {Object: map[string]any{"apiVersion": alpha, "kind": dgd}},
		"null spec":        graph(beta, dgd, nil),
		"no services":      graph(alpha, dgd, map[string]any{}),
		"null services":    graph(alpha, dgd, map[string]any{"services": nil}),
		"empty components": graph(beta, dgd, map[string]any{"components": []any{}}),
		"v1beta1 graph with v1alpha1 shape": graph(beta, dgd, map[string]any{"services": map[string]any{
			"w": map[string]any{"extraPodSpec": map[string]any{"mainContainer": map[string]any{"image": "x"}}},
		}}),
		"empty backendFramework": graph(alpha, dgd, map[string]any{"backendFramework": ""}),
		"metadata string":        {Object: map[string]any{"apiVersion": alpha, "kind": dgd, "metadata": "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := New().Scrape(context.Background(), obj)
			require.NoError(t, err)
			require.Equal(t, adapter.Findings{Scrapers: scrapers}, f)
		})
	}

	// A null service is a component with nothing set.
	f := mustScrape(t, graph(alpha, dgd, map[string]any{"services": map[string]any{"w": nil}}))
	require.Equal(t, adapter.Findings{Scrapers: scrapers, Properties: props("dynamo.component.0.name", "w")}, f)

	// A v1beta1 component without a container named main has no main
	// container: no pod name, no detection.
	f = mustScrape(t, graph(beta, dgd, map[string]any{"components": []any{map[string]any{"name": "w", "type": "worker",
		"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "engine", "image": "x:1", "command": []any{"python3", "-m", "dynamo.vllm"}},
		}}}}}}))
	require.Equal(t, []string{"engine | w | init=false | pod= | x:1 | spec.components[0].podTemplate.spec.containers[0].image"}, containers(f))
	require.Empty(t, f.Runtimes)
}

func TestManyComponents(t *testing.T) {
	const n = 10000
	list := make([]any, n)
	services := make(map[string]any, n)
	for i := range n {
		name := fmt.Sprintf("c%05d", i)
		list[i] = map[string]any{"name": name, "type": "worker", "podTemplate": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1", "args": []any{"python3 -m dynamo.vllm --model m"}},
		}}}}
		services[name] = map[string]any{"componentType": "worker", "extraPodSpec": map[string]any{"mainContainer": map[string]any{"image": "x:1"}}}
	}
	f := mustScrape(t, graph(beta, dgd, map[string]any{"components": list}))
	require.Len(t, f.Containers, n)
	require.Len(t, f.Runtimes, 3*n) // per component: the adapter's reading of the command, and the image's platform and engine
	require.Len(t, f.Models, n)
	require.Equal(t, "c09999", f.Containers[n-1].Group)

	f = mustScrape(t, graph(alpha, dgd, map[string]any{"services": services}))
	require.Len(t, f.Containers, n)
	require.Equal(t, "c00000", f.Containers[0].Group)
	require.Equal(t, "c09999", f.Containers[n-1].Group)

	// A cancelled context stops the scrape.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New().Scrape(ctx, graph(beta, dgd, map[string]any{"components": list}))
	require.ErrorIs(t, err, context.Canceled)
}
