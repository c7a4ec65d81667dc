package plugin_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/aibom-dev/aibom/adapters/apps"
	"github.com/aibom-dev/aibom/adapters/batch"
	"github.com/aibom-dev/aibom/adapters/dynamo"
	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/adapters/lws"
	"github.com/aibom-dev/aibom/adapters/nim"
	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/adapter/conformance"
	"github.com/aibom-dev/aibom/pkg/adapter/plugin"
	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// adaptersDir is the in-tree adapters' folder, from this package.
const adaptersDir = "../../../adapters"

// transportCase is the conformance run of one in-tree adapter: the fixtures
// and options of its own adapters/<name>/conformance_test.go.
type transportCase struct {
	fixtures func(t *testing.T) []conformance.Fixture
	opts     []conformance.Option
}

// TestConformanceOverPlugin serves every in-tree adapter through the plugin
// transport in process (gRPC service, JSON codec and Client, over an
// in-memory listener) and runs the conformance suite against the client
// side, with the fixtures of the adapter's own in-process run: the testdata
// files of dynamo, lws and nim, read by path, and the manifests apps and
// batch write inline in their conformance_test.go, read from that file's
// constants. The expectations are those of each adapter's
// conformance_test.go.
func TestConformanceOverPlugin(t *testing.T) {
	cases := transportCases()
	all := intree.All()
	for name := range cases {
		if _, ok := all[name]; !ok {
			t.Errorf("transport case %q names no in-tree adapter (known: %v)", name, intree.Names())
		}
	}
	for _, name := range intree.Names() {
		tc, ok := cases[name]
		if !ok {
			t.Errorf("in-tree adapter %q has no transport conformance case: add its fixtures (those of adapters/%s/conformance_test.go) to transportCases", name, name)
			continue
		}
		a := all[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fixtures := tc.fixtures(t)
			c, err := plugin.InProcess(a)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			if c.Name() != a.Name() {
				t.Fatalf("over the transport the adapter is named %q, in process %q", c.Name(), a.Name())
			}
			conformance.Run(t, conformance.NewHarness(c, fixtures...), tc.opts...)
		})
	}
}

func transportCases() map[string]transportCase {
	return map[string]transportCase{
		"apps":   {fixtures: appsFixtures},
		"batch":  {fixtures: batchFixtures},
		"dynamo": {fixtures: dynamoFixtures, opts: dynamoOptions()},
		"grove": {fixtures: func(*testing.T) []conformance.Fixture { return nil }, opts: []conformance.Option{
			conformance.WalkOnly("Grove's kinds only connect a PodCliqueSet's owner (a DynamoGraphDeployment) to its pods; " +
				"the owner's adapter reads the images from its own spec"),
		}},
		"lws": {fixtures: lwsFixtures},
		"nim": {fixtures: nimFixtures},
	}
}

// inlineManifests returns the string constants of a Go file: the manifests
// an adapter's conformance_test.go writes inline, by constant name.
func inlineManifests(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatalf("reading the inline fixtures of %s: %v", file, err)
	}
	out := map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: constant %s: %v", file, n.Name, err)
				}
				out[n.Name] = s
			}
		}
	}
	return out
}

// inlineFixture builds a fixture from a constant of an adapter's
// conformance_test.go, as that file's fixture helper does.
func inlineFixture(t *testing.T, consts map[string]string, file, constName, name string, expect conformance.Expect, wantErr bool) conformance.Fixture {
	t.Helper()
	doc, ok := consts[constName]
	if !ok {
		names := make([]string, 0, len(consts))
		for n := range consts {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Fatalf("%s has no constant %s (it has %v): update this test with the adapter's fixtures", file, constName, names)
	}
	obj, err := conformance.DecodeObject([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return conformance.Fixture{Name: name, Object: obj, Expect: expect, WantErr: wantErr}
}

func appsFixtures(t *testing.T) []conformance.Fixture {
	file := filepath.Join(adaptersDir, "apps", "conformance_test.go")
	c := inlineManifests(t, file)
	return []conformance.Fixture{
		inlineFixture(t, c, file, "deployment", "deployment", conformance.Expect{
			Images:     []string{"vllm/vllm-openai:v0.6.3"},
			Runtimes:   []conformance.Claim{conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-8B-Instruct")},
			Data:       []conformance.Claim{conformance.Inferred("cache (llama-cache)")},
			Properties: map[string]string{apps.PropertyReplicas: "2"},
			Redactions: []adapter.Redaction{{Locator: "spec.template.spec.containers[0].env[1](HF_TOKEN)", Reason: podtemplate.ReasonSecretName}},
		}, false),
		inlineFixture(t, c, file, "statefulSet", "statefulset", conformance.Expect{
			Images:     []string{"ghcr.io/huggingface/text-generation-inference:2.4.0"},
			Runtimes:   []conformance.Claim{conformance.Inferred("tgi")},
			Models:     []conformance.Claim{conformance.Inferred("bigscience/bloom-560m")},
			Data:       []conformance.Claim{conformance.Inferred("weights (volumeClaimTemplate)")},
			Properties: map[string]string{apps.PropertyReplicas: "1"},
		}, false),
		inlineFixture(t, c, file, "daemonSet", "daemonset", conformance.Expect{
			Images:   []string{"ollama/ollama:0.5.7", "busybox:1.36"},
			Runtimes: []conformance.Claim{conformance.Inferred("ollama")},
		}, false),
		inlineFixture(t, c, file, "badTemplate", "bad-template", conformance.Expect{}, true),
	}
}

func batchFixtures(t *testing.T) []conformance.Fixture {
	file := filepath.Join(adaptersDir, "batch", "conformance_test.go")
	c := inlineManifests(t, file)
	return []conformance.Fixture{
		inlineFixture(t, c, file, "job", "job", conformance.Expect{
			Images:   []string{"python:3.12", "vllm/vllm-openai:latest"},
			Runtimes: []conformance.Claim{conformance.Inferred("vllm")},
			Models: []conformance.Claim{
				conformance.Declared("mistralai/Mistral-7B-Instruct-v0.3"),
				conformance.Declared("Qwen/Qwen2.5-72B"),
				conformance.Inferred("/models/m"),
			},
			Data:       []conformance.Claim{conformance.Inferred("m")},
			Properties: map[string]string{batch.PropertyParallelism: "2", batch.PropertyCompletions: "4"},
		}, false),
		inlineFixture(t, c, file, "cronJob", "cronjob", conformance.Expect{
			Images:     []string{"lmsysorg/sglang:v0.4.6"},
			Runtimes:   []conformance.Claim{conformance.Inferred("sglang")},
			Models:     []conformance.Claim{conformance.Declared("Qwen/Qwen2.5-7B-Instruct")},
			Properties: map[string]string{batch.PropertySchedule: "0 3 * * *"},
		}, false),
		inlineFixture(t, c, file, "badJobTemplate", "bad-job-template", conformance.Expect{}, true),
	}
}

func loadFixtures(t *testing.T, adapterName string, expect map[string]conformance.Expect) []conformance.Fixture {
	t.Helper()
	fixtures, err := conformance.LoadFixtures(filepath.Join(adaptersDir, adapterName, "testdata", "*.yaml"), expect)
	if err != nil {
		t.Fatal(err)
	}
	if len(fixtures) == 0 {
		t.Fatalf("no fixtures in %s/testdata", filepath.Join(adaptersDir, adapterName))
	}
	return fixtures
}

func dynamoFixtures(t *testing.T) []conformance.Fixture {
	const (
		vllm   = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1"
		sglang = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.1"
		trtllm = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.4.1"
	)
	main := map[string][]string{dynamo.MainContainer: {dynamo.MainContainer}}
	return loadFixtures(t, "dynamo", map[string]conformance.Expect{
		"dcd-v1alpha1": {
			Images:     []string{vllm},
			Runtimes:   []conformance.Claim{conformance.Declared("vllm"), conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("Qwen/Qwen3-0.6B"), conformance.Inferred("Qwen/Qwen3-0.6B")},
			Properties: map[string]string{dynamo.PropertyBackendFramework: "vllm", "dynamo.component.0.name": "VllmDecodeWorker", "dynamo.component.0.replicas": "2"},
			PodNames:   main,
		},
		"dcd-v1beta1": {
			Images:     []string{vllm},
			Runtimes:   []conformance.Claim{conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-405B-Instruct")},
			Properties: map[string]string{"dynamo.component.0.name": "decode", "dynamo.component.0.nodeCount": "2"},
			PodNames:   main,
		},
		"sglang-agg-v1beta1": {
			Images:   []string{sglang},
			Runtimes: []conformance.Claim{conformance.Inferred("sglang")},
			Models: []conformance.Claim{
				conformance.Declared("deepseek-ai/DeepSeek-R1-Distill-Llama-8B"),
				conformance.Declared("deepseek-r1-distill"),
			},
			Properties: map[string]string{"dynamo.component.0.type": "frontend", "dynamo.component.1.type": "worker"},
			PodNames:   main,
		},
		"trtllm-multinode-v1alpha1": {
			Images:   []string{trtllm},
			Runtimes: []conformance.Claim{conformance.Declared("tensorrt-llm"), conformance.Inferred("tensorrt-llm")},
			Models: []conformance.Claim{
				conformance.Inferred("nvidia/Llama-3.1-8B-Instruct-FP8"),
				conformance.Declared("nvidia/Llama-3.1-8B-Instruct-FP8"),
				conformance.Declared("meta-llama/Llama-3.1-8B-Instruct"),
			},
			Properties: map[string]string{dynamo.PropertyBackendFramework: "trtllm", "dynamo.component.1.nodeCount": "2"},
			PodNames:   map[string][]string{"trtllm": {dynamo.MainContainer}},
		},
		"vllm-disagg-v1alpha1": {
			Images:     []string{vllm, "busybox:1.36", "prom/statsd-exporter:v0.26.0"},
			Runtimes:   []conformance.Claim{conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("Qwen/Qwen3-0.6B")},
			Data:       []conformance.Claim{conformance.Inferred("model-cache")},
			Properties: map[string]string{"dynamo.component.1.subComponentType": "decode", "dynamo.component.2.subComponentType": "prefill"},
			PodNames:   main,
			Redactions: []adapter.Redaction{{Locator: "spec.services.VllmDecodeWorker.envs[1](HF_TOKEN)", Reason: podtemplate.ReasonSecretName}},
		},
		"vllm-disagg-v1beta1": {
			Images:     []string{vllm, "prom/statsd-exporter:v0.26.0"},
			Runtimes:   []conformance.Claim{conformance.Declared("vllm"), conformance.Inferred("vllm")},
			Models:     []conformance.Claim{conformance.Declared("Qwen/Qwen3-0.6B")},
			Data:       []conformance.Claim{conformance.Inferred("model-cache (model-cache)")},
			Properties: map[string]string{dynamo.PropertyBackendFramework: "vllm", "dynamo.component.1.type": "decode"},
			PodNames:   main,
		},
	})
}

func dynamoOptions() []conformance.Option {
	return []conformance.Option{
		conformance.AllowValue("c1899de289a04d12100db370d81485cdf75e47ca",
			"spec.components[1].modelRef.revision in vllm-disagg-v1beta1 is a Git commit hash, reported as the model's version; "+
				"podtemplate.Redact masks 40-hex runs (a documented false positive)"),
	}
}

func lwsFixtures(t *testing.T) []conformance.Fixture {
	return loadFixtures(t, "lws", map[string]conformance.Expect{
		"disaggregatedset-inline": {
			Images:   []string{"ghcr.io/llm-d/llm-d:v0.2.0"},
			Runtimes: []conformance.Claim{conformance.Inferred("llm-d")},
			Models:   []conformance.Claim{conformance.Declared("meta-llama/Llama-3.1-8B-Instruct")},
			Properties: map[string]string{
				lws.PropertyRolePrefix + "0.name": "prefill", lws.PropertyRolePrefix + "1.name": "decode",
				lws.PropertyRolePrefix + "0.replicas": "3", lws.PropertyRolePrefix + "0.leaderTemplate": lws.LeaderTemplateWorker,
			},
		},
		"disaggregatedset": {
			Images:   []string{"vllm/vllm-openai:v0.10.1", "rayproject/ray:2.44.1"},
			Runtimes: []conformance.Claim{conformance.Inferred("vllm"), conformance.Inferred("ray-serve")},
			Models:   []conformance.Claim{conformance.Declared("Qwen/Qwen3-32B"), conformance.Inferred("Qwen/Qwen3-32B")},
			Data:     []conformance.Claim{conformance.Inferred("cache (hf-cache)")},
			Properties: map[string]string{
				lws.PropertySlices: "1", lws.PropertyRolePrefix + "1.scaling": "External",
				lws.PropertyRolePrefix + "1.leaderTemplate": lws.LeaderTemplateOwn,
			},
		},
		"leaderworkerset-leader-worker": {
			Images:   []string{"vllm/vllm-openai:v0.8.5"},
			Runtimes: []conformance.Claim{conformance.Inferred("vllm")},
			Models:   []conformance.Claim{conformance.Declared("meta-llama/Meta-Llama-3.1-405B-Instruct")},
			Properties: map[string]string{
				lws.PropertyReplicas: "2", lws.PropertySize: "2", lws.PropertyStartupPolicy: "LeaderCreated",
				lws.PropertyLeaderTemplate: lws.LeaderTemplateOwn,
			},
		},
		"leaderworkerset-worker-only": {
			Images:   []string{"lmsysorg/sglang:v0.4.6.post1-cu124"},
			Runtimes: []conformance.Claim{conformance.Inferred("sglang")},
			Models:   []conformance.Claim{conformance.Declared("deepseek-ai/DeepSeek-V3"), conformance.Declared("/models/DeepSeek-V3")},
			Data:     []conformance.Claim{conformance.Inferred("weights (volumeClaimTemplate)")},
			Properties: map[string]string{
				lws.PropertyLeaderTemplate: lws.LeaderTemplateWorker, lws.PropertyRestartPolicy: "RecreateGroupOnPodRestart",
			},
			Redactions: []adapter.Redaction{{
				Locator: "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].env[0](HF_TOKEN)",
				Reason:  podtemplate.ReasonSecretName,
			}},
		},
	})
}

func nimFixtures(t *testing.T) []conformance.Fixture {
	podNames := func(name string) map[string][]string {
		return map[string][]string{name + "-ctr": {name + "-ctr", nim.LeaderContainerName, nim.WorkerContainerName}}
	}
	declaredNIM := conformance.Declared(nim.RuntimeName)
	return loadFixtures(t, "nim", map[string]conformance.Expect{
		"nimservice-digest": {
			Images:   []string{"nvcr.io/nim/nvidia/llama-3.2-nv-embedqa-1b-v2@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
			Runtimes: []conformance.Claim{declaredNIM},
			Models:   []conformance.Claim{conformance.Inferred("nvidia/llama-3.2-nv-embedqa-1b-v2")},
			Data:     []conformance.Claim{conformance.Declared("/data/nim"), conformance.Declared("emptyDir")},
			Properties: map[string]string{
				nim.PropertyOperatorReference: "nvcr.io/nim/nvidia/llama-3.2-nv-embedqa-1b-v2:sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				nim.PropertyInferencePlatform: nim.DefaultInferencePlatform,
			},
			PodNames: podNames("embed"),
		},
		"nimservice-llama": {
			Images:     []string{"nvcr.io/nim/meta/llama-3.2-1b-instruct:1.12.0"},
			Runtimes:   []conformance.Claim{declaredNIM},
			Models:     []conformance.Claim{conformance.Inferred("meta/llama-3.2-1b-instruct")},
			Data:       []conformance.Claim{conformance.Declared("meta-llama-3-2-1b-instruct")},
			Properties: map[string]string{nim.PropertyReplicas: "1", nim.PropertyStoragePrefix + "nimCache.name": "meta-llama-3-2-1b-instruct"},
			PodNames:   podNames("meta-llama-3-2-1b-instruct"),
			Redactions: []adapter.Redaction{{Locator: "spec.env[0](NGC_API_KEY)", Reason: podtemplate.ReasonSecretName}},
		},
		"nimservice-multi-llm": {
			Images:     []string{"nvcr.io/nim/nvidia/llm-nim:1.12.0"},
			Runtimes:   []conformance.Claim{declaredNIM},
			Models:     []conformance.Claim{conformance.Inferred("hf://meta-llama/Llama-3.2-1B-Instruct")},
			Data:       []conformance.Claim{conformance.Declared("llm-nim-pvc")},
			Properties: map[string]string{nim.PropertyStoragePrefix + "pvc.create": "true", nim.PropertyStoragePrefix + "pvc.size": "50Gi"},
			PodNames:   podNames("llm-nim"),
		},
		"nimservice-multinode": {
			Images:   []string{"nvcr.io/nim/meta/llama-3.1-405b-instruct:1.8.4", "busybox:1.36", "nginx:1.27"},
			Runtimes: []conformance.Claim{declaredNIM},
			Models: []conformance.Claim{
				conformance.Declared("meta-llama/Llama-3.1-405B-Instruct"),
				conformance.Declared("llama-405b"),
				conformance.Inferred("meta/llama-3.1-405b-instruct"),
			},
			Data: []conformance.Claim{conformance.Declared("llama-3-1-405b")},
			Properties: map[string]string{
				nim.PropertyMultiNodePrefix + "backendType":          nim.DefaultBackendType,
				nim.PropertyMultiNodePrefix + "parallelism.pipeline": "2",
				nim.PropertyMultiNodePrefix + "parallelism.tensor":   "8",
			},
			PodNames: podNames("llama-3-1-405b"),
		},
		"nimservice-pvc": {
			Images:   []string{"nvcr.io/nim/mistralai/mistral-nemo-12b-instruct:latest"},
			Runtimes: []conformance.Claim{declaredNIM},
			Models: []conformance.Claim{
				conformance.Declared("mistralai/Mistral-Nemo-Instruct-2407"),
				conformance.Inferred("mistralai/mistral-nemo-12b-instruct"),
			},
			Data:       []conformance.Claim{conformance.Declared("nim-model-store")},
			Properties: map[string]string{nim.PropertyInferencePlatform: "kserve", nim.PropertyStoragePrefix + "pvc.subPath": "mistral"},
			PodNames:   podNames("mistral-nemo"),
		},
	})
}
