package nim

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

func podNames(name string) []string { return []string{name + "-ctr", "nim-leader", "nim-worker"} }

func nimRuntime(version string) []adapter.Runtime {
	return []adapter.Runtime{{Name: "nim", Version: version, Platform: true, Confidence: adapter.Declared,
		Evidence: ev(adapter.SourceCRDField, "spec.image.repository")}}
}

var scrapers = []adapter.Scraper{Scraper()}

func TestKinds(t *testing.T) {
	a := New()
	require.Equal(t, "nim", a.Name())
	ks := a.Kinds()
	require.Len(t, ks, 2)
	require.NoError(t, ks[1].Validate())
	require.Equal(t, adapter.RoleReferenced, ks[1].Role)
	require.Equal(t, "NIMCache", ks[1].Kind)
	require.NoError(t, ks[0].Validate())
	require.Equal(t, adapter.RoleTracked, ks[0].Role)
	require.Equal(t, "apps.nvidia.com/v1alpha1, Resource=nimservices", ks[0].GroupVersionResource().String())
	ks[0].Versions[0] = "v9"
	require.Equal(t, "v1alpha1", a.Kinds()[0].Versions[0])
}

func TestScrapeFixtures(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		fixture string
		want    adapter.Findings
	}{
		{"nimservice-llama.yaml", adapter.Findings{
			Scrapers: scrapers,
			Containers: []adapter.Container{{Name: "meta-llama-3-2-1b-instruct-ctr", Image: "nvcr.io/nim/meta/llama-3.2-1b-instruct:1.12.0",
				PodNames: podNames("meta-llama-3-2-1b-instruct"), Evidence: ev(adapter.SourceImageReference, "spec.image")}},
			Runtimes: nimRuntime("1.12.0"),
			Models: []adapter.Model{{Name: "meta/llama-3.2-1b-instruct", Confidence: adapter.Inferred,
				Evidence: ev(adapter.SourceImagePattern, "spec.image.repository")},
				// No resolver in this scrape: the NIMCache is unresolved.
				{Name: "NIMCache/meta-llama-3-2-1b-instruct", Confidence: adapter.Unresolved,
					Evidence: ev(adapter.SourceCRDField, "spec.storage.nimCache.name")}},
			Data: []adapter.Data{{Name: "meta-llama-3-2-1b-instruct", Kind: "nimcache", Confidence: adapter.Declared,
				Evidence: ev(adapter.SourceCRDField, "spec.storage.nimCache.name")}},
			Properties: props("nim.replicas", "1", "nim.storage.nimCache.name", "meta-llama-3-2-1b-instruct",
				"nim.inferencePlatform", "standalone"),
			Redactions: []adapter.Redaction{{Locator: "spec.env[0](NGC_API_KEY)", Reason: podtemplate.ReasonSecretName}},
		}},
		{"nimservice-multi-llm.yaml", adapter.Findings{
			Scrapers: scrapers,
			Containers: []adapter.Container{{Name: "llm-nim-ctr", Image: "nvcr.io/nim/nvidia/llm-nim:1.12.0",
				PodNames: podNames("llm-nim"), Evidence: ev(adapter.SourceImageReference, "spec.image")}},
			Runtimes: nimRuntime("1.12.0"),
			// No model from the multi-LLM image.
			Models: []adapter.Model{
				// The served name is the model's: one component.
				{Name: "meta-llama/Llama-3.2-1B-Instruct", Source: "hf://meta-llama/Llama-3.2-1B-Instruct", ServedName: "llama-3.2-1b",
					Confidence: adapter.Inferred, Evidence: ev(adapter.SourceEnvVar, "spec.env[0](NIM_MODEL_NAME)")},
				{Name: "meta-llama/Llama-3.2-1B-Instruct", Source: "hf://meta-llama/Llama-3.2-1B-Instruct", ServedName: "llama-3.2-1b",
					Confidence: adapter.Inferred, Evidence: ev(adapter.SourceEnvVar, "spec.env[1](NIM_SERVED_MODEL_NAME)")},
			},
			Data: []adapter.Data{{Name: "llm-nim-pvc", Kind: "pvc", Confidence: adapter.Declared,
				Evidence: ev(adapter.SourceCRDField, "spec.storage.pvc.create")}},
			Properties: props("nim.replicas", "1", "nim.storage.pvc.create", "true", "nim.storage.pvc.size", "50Gi",
				"nim.storage.pvc.storageClass", "standard", "nim.storage.pvc.volumeAccessMode", "ReadWriteOnce",
				"nim.inferencePlatform", "standalone"),
		}},
		{"nimservice-multinode.yaml", adapter.Findings{
			Scrapers: scrapers,
			Containers: []adapter.Container{
				{Name: "llama-3-1-405b-ctr", Image: "nvcr.io/nim/meta/llama-3.1-405b-instruct:1.8.4",
					PodNames: podNames("llama-3-1-405b"), Evidence: ev(adapter.SourceImageReference, "spec.image")},
				{Name: "wait-cache", Image: "busybox:1.36", Init: true, Evidence: ev(adapter.SourceImageReference, "spec.initContainers[0].image")},
				{Name: "metrics-proxy", Image: "nginx:1.27", Evidence: ev(adapter.SourceImageReference, "spec.sidecarContainers[0].image")},
			},
			Runtimes: nimRuntime("1.8.4"),
			Models: []adapter.Model{
				{Name: "meta-llama/Llama-3.1-405B-Instruct", Confidence: adapter.Declared,
					Evidence: ev(adapter.SourceWorkloadAnnotation, "metadata.annotations[model.aibom.dev/base]")},
				{Name: "llama-405b", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "spec.args[0](--served-model-name)")},
				// A served-model name is an alias: the image still implies the model.
				{Name: "meta/llama-3.1-405b-instruct", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.image.repository")},
				{Name: "NIMCache/llama-3-1-405b", Confidence: adapter.Unresolved, Evidence: ev(adapter.SourceCRDField, "spec.storage.nimCache.name")},
			},
			Data: []adapter.Data{{Name: "llama-3-1-405b", Kind: "nimcache", Confidence: adapter.Declared,
				Evidence: ev(adapter.SourceCRDField, "spec.storage.nimCache.name")}},
			Properties: props("nim.storage.nimCache.name", "llama-3-1-405b",
				"nim.storage.nimCache.profile", "tensorrt_llm-h100-fp8-tp8-pp2-throughput",
				"nim.multiNode.backendType", "lws", "nim.multiNode.parallelism.pipeline", "2", "nim.multiNode.parallelism.tensor", "8",
				"nim.inferencePlatform", "standalone"),
		}},
		{"nimservice-pvc.yaml", adapter.Findings{
			Scrapers: scrapers,
			Containers: []adapter.Container{{Name: "mistral-nemo-ctr", Image: "nvcr.io/nim/mistralai/mistral-nemo-12b-instruct:latest",
				PodNames: podNames("mistral-nemo"), Evidence: ev(adapter.SourceImageReference, "spec.image")}},
			Runtimes: nimRuntime(""), // "latest" is no version
			Models: []adapter.Model{
				{Name: "mistralai/Mistral-Nemo-Instruct-2407", Confidence: adapter.Declared,
					Evidence: ev(adapter.SourcePodTemplateAnnotation, "spec.annotations[model.aibom.dev/base]")},
				{Name: "mistralai/mistral-nemo-12b-instruct", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.image.repository")},
			},
			Data: []adapter.Data{{Name: "nim-model-store", Kind: "pvc", Confidence: adapter.Declared,
				Evidence: ev(adapter.SourceCRDField, "spec.storage.pvc.name")}},
			Properties: props("nim.storage.pvc.name", "nim-model-store", "nim.storage.pvc.create", "false",
				"nim.storage.pvc.subPath", "mistral", "nim.storage.readOnly", "false", "nim.inferencePlatform", "kserve"),
		}},
		{"nimservice-digest.yaml", adapter.Findings{
			Scrapers: scrapers,
			Containers: []adapter.Container{{Name: "embed-ctr", Image: "nvcr.io/nim/nvidia/llama-3.2-nv-embedqa-1b-v2@" + digest,
				PodNames: podNames("embed"), Evidence: ev(adapter.SourceImageReference, "spec.image")}},
			Runtimes: nimRuntime(""),
			Models: []adapter.Model{{Name: "nvidia/llama-3.2-nv-embedqa-1b-v2", Confidence: adapter.Inferred,
				Evidence: ev(adapter.SourceImagePattern, "spec.image.repository")}},
			Data: []adapter.Data{
				{Name: "/data/nim", Kind: "hostPath", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.storage.hostPath")},
				{Name: "emptyDir", Kind: "emptyDir", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.storage.emptyDir")},
			},
			Properties: props("nim.image.operatorReference", "nvcr.io/nim/nvidia/llama-3.2-nv-embedqa-1b-v2:"+digest,
				"nim.storage.hostPath", "/data/nim", "nim.storage.emptyDir.sizeLimit", "20Gi", "nim.inferencePlatform", "standalone"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			obj := fixture(t, tt.fixture)
			f, err := New().Scrape(context.Background(), obj)
			require.NoError(t, err)
			require.Equal(t, tt.want, f)
			again, err := New().Scrape(context.Background(), obj)
			require.NoError(t, err)
			require.Equal(t, f, again)
		})
	}
}

func nimObject(spec any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService",
		"metadata": map[string]any{"name": "n"}, "spec": spec,
	}}
}

func image(repo, tag string) map[string]any {
	return map[string]any{"repository": repo, "tag": tag}
}

func TestImage(t *testing.T) {
	tests := []struct {
		name      string
		img       any
		wantImage string
		version   string
		model     string
		props     []adapter.Property
	}{
		{"version", image("nvcr.io/nim/meta/llama3-8b-instruct", "1.0.3"), "nvcr.io/nim/meta/llama3-8b-instruct:1.0.3", "1.0.3", "meta/llama3-8b-instruct", nil},
		{"version suffix", image("nvcr.io/nim/meta/llama3-8b-instruct", "1.8.0-rtx"), "nvcr.io/nim/meta/llama3-8b-instruct:1.8.0-rtx", "1.8.0-rtx", "meta/llama3-8b-instruct", nil},
		{"no tag", map[string]any{"repository": "nvcr.io/nim/meta/llama3-8b-instruct"}, "nvcr.io/nim/meta/llama3-8b-instruct", "", "meta/llama3-8b-instruct", nil},
		{"digest tag", image("nvcr.io/nim/meta/llama3-8b-instruct", "sha256:"+strings.Repeat("ab", 32)),
			"nvcr.io/nim/meta/llama3-8b-instruct@sha256:" + strings.Repeat("ab", 32), "", "meta/llama3-8b-instruct",
			props("nim.image.operatorReference", "nvcr.io/nim/meta/llama3-8b-instruct:sha256:"+strings.Repeat("ab", 32))},
		{"short digest tag kept as written", image("nvcr.io/nim/meta/x", "sha256:abc"), "nvcr.io/nim/meta/x:sha256:abc", "", "meta/x", nil},
		{"digest in repository", map[string]any{"repository": "nvcr.io/nim/meta/x@sha256:" + strings.Repeat("cd", 32)},
			"nvcr.io/nim/meta/x@sha256:" + strings.Repeat("cd", 32), "", "meta/x", nil},
		{"multi-llm", image("nvcr.io/nim/nvidia/llm-nim", "1.12.0"), "nvcr.io/nim/nvidia/llm-nim:1.12.0", "1.12.0", "", nil},
		{"deeper path", image("nvcr.io/nim/nvidia/a/b", "1.0.0"), "nvcr.io/nim/nvidia/a/b:1.0.0", "1.0.0", "", nil},
		{"mirror", image("registry.example/nim/meta/llama", "1.0.0"), "registry.example/nim/meta/llama:1.0.0", "1.0.0", "", nil},
		{"no image", nil, "", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New().Scrape(context.Background(), nimObject(map[string]any{"image": tt.img}))
			require.NoError(t, err)
			require.Len(t, f.Containers, 1)
			require.Equal(t, tt.wantImage, f.Containers[0].Image)
			require.Equal(t, "spec.image", f.Containers[0].Evidence.Locator)
			require.Equal(t, nimRuntime(tt.version), f.Runtimes)
			if tt.model == "" {
				require.Empty(t, f.Models)
			} else {
				require.Equal(t, []adapter.Model{{Name: tt.model, Confidence: adapter.Inferred,
					Evidence: ev(adapter.SourceImagePattern, "spec.image.repository")}}, f.Models)
			}
			require.Equal(t, append(tt.props, props("nim.inferencePlatform", "standalone")...), f.Properties)
		})
	}
}

func TestModelPrecedence(t *testing.T) {
	const repo = "nvcr.io/nim/meta/llama-3.1-8b-instruct"
	tests := []struct {
		name string
		spec map[string]any
		want []adapter.Model
	}{
		{"model flag replaces image", map[string]any{"args": []any{"--model", "/model-store/llama"}},
			[]adapter.Model{{Name: "llama", Source: "/model-store/llama", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "spec.args[0](--model)")}}},
		{"command flag", map[string]any{"command": []any{"python3", "-m", "vllm.entrypoints.openai.api_server", "--model=m/x"}},
			[]adapter.Model{{Name: "m/x", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerCommand, "spec.command[3](--model)")}}},
		{"env replaces image", map[string]any{"env": []any{map[string]any{"name": "NIM_MODEL_NAME", "value": "ngc://nim/meta/llama"}}},
			[]adapter.Model{{Name: "nim/meta/llama", Source: "ngc://nim/meta/llama", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceEnvVar, "spec.env[0](NIM_MODEL_NAME)")}}},
		{"valueFrom never read", map[string]any{"env": []any{map[string]any{"name": "NIM_MODEL_NAME", "value": "x", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "c", "key": "k"}}}}},
			[]adapter.Model{{Name: "meta/llama-3.1-8b-instruct", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.image.repository")}}},
		{"served name alone keeps image", map[string]any{"env": []any{map[string]any{"name": "NIM_SERVED_MODEL_NAME", "value": "llama"}}},
			[]adapter.Model{
				{Name: "llama", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceEnvVar, "spec.env[0](NIM_SERVED_MODEL_NAME)")},
				{Name: "meta/llama-3.1-8b-instruct", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.image.repository")},
			}},
		{"init container model does not replace image", map[string]any{"initContainers": []any{map[string]any{"name": "i", "image": "busybox", "args": []any{"--model", "x"}}}},
			[]adapter.Model{
				{Name: "meta/llama-3.1-8b-instruct", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.image.repository")},
				{Name: "x", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "spec.initContainers[0].args[0](--model)")},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec["image"] = image(repo, "1.3.0")
			f, err := New().Scrape(context.Background(), nimObject(tt.spec))
			require.NoError(t, err)
			require.Equal(t, tt.want, f.Models)
		})
	}
}

func TestNoSecretInFindings(t *testing.T) {
	const key = "nvapi-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ" // in nimservice-llama.yaml
	for _, name := range []string{"nimservice-llama.yaml", "nimservice-multi-llm.yaml", "nimservice-multinode.yaml", "nimservice-pvc.yaml", "nimservice-digest.yaml"} {
		t.Run(name, func(t *testing.T) {
			obj := fixture(t, name)
			spec := obj.Object["spec"].(map[string]any)
			env, _ := spec["env"].([]any)
			spec["env"] = append(env,
				map[string]any{"name": "NGC_API_KEY", "value": key},
				map[string]any{"name": "NIM_MODEL_NAME", "value": "https://u:" + key + "@example.com/m"})
			spec["authSecret"] = key
			spec["args"] = []any{"--model", key}
			spec["annotations"] = map[string]any{"model.aibom.dev/x": key}
			spec["storage"] = map[string]any{"nimCache": map[string]any{"name": key, "profile": key},
				"pvc": map[string]any{"name": key, "subPath": key}, "hostPath": "/x/" + key}
			spec["initContainers"] = []any{map[string]any{"name": "i", "image": "busybox", "env": []any{map[string]any{"name": "HF_TOKEN", "value": key}}}}
			f, err := New().Scrape(context.Background(), obj)
			require.NoError(t, err)
			js, err := json.Marshal(f)
			require.NoError(t, err)
			require.NotContains(t, string(js), "nvapi-")
			require.NotContains(t, string(js), "abcdefghijklmnopqrstuvwxyz0123456789")
			require.Contains(t, f.Redactions, adapter.Redaction{Locator: "spec.storage.nimCache.name", Reason: podtemplate.ReasonToken})
			require.Contains(t, f.Redactions, adapter.Redaction{Locator: "spec.initContainers[0].env[0](HF_TOKEN)", Reason: podtemplate.ReasonSecretName})
		})
	}
}

func TestAuthSecretNeverReported(t *testing.T) {
	f, err := New().Scrape(context.Background(), fixture(t, "nimservice-llama.yaml"))
	require.NoError(t, err)
	js, err := json.Marshal(f)
	require.NoError(t, err)
	require.NotContains(t, string(js), "ngc-api-secret")
	require.NotContains(t, string(js), "authSecret")
}

func TestScrapeRejects(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"nil", nil, "nim: no object"},
		{"nil object", &unstructured.Unstructured{}, "nim: no object"},
		{"nimcache", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMCache"}}, "not a tracked kind"},
		{"other version", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.nvidia.com/v1beta1", "kind": "NIMService"}}, "not a tracked kind"},
		{"spec string", nimObject("x"), "nim: NIMService n: spec: expected object, got string"},
		{"image string", nimObject(map[string]any{"image": "nvcr.io/nim/meta/x:1"}), "spec.image: expected object, got string"},
		{"repository number", nimObject(map[string]any{"image": map[string]any{"repository": int64(1)}}), "spec.image.repository: expected string, got number"},
		{"tag object", nimObject(map[string]any{"image": map[string]any{"repository": "r", "tag": map[string]any{}}}), "spec.image.tag: expected string, got object"},
		{"args map", nimObject(map[string]any{"args": map[string]any{}}), "spec.args"},
		{"command string", nimObject(map[string]any{"command": "serve"}), "spec.command"},
		{"env string", nimObject(map[string]any{"env": "X=1"}), "spec.env"},
		{"env element list", nimObject(map[string]any{"env": []any{[]any{}}}), "spec.env[0]"},
		{"annotations list", nimObject(map[string]any{"annotations": []any{}}), "spec.annotations: expected object, got list"},
		{"model annotation number", nimObject(map[string]any{"annotations": map[string]any{"model.aibom.dev/x": int64(1)}}), "spec.annotations[model.aibom.dev/x]: expected string, got number"},
		{"initContainers map", nimObject(map[string]any{"initContainers": map[string]any{}}), "spec.initContainers: expected list, got object"},
		{"initContainer string", nimObject(map[string]any{"initContainers": []any{"c"}}), "spec.initContainers[0]: expected object, got string"},
		{"sidecar null", nimObject(map[string]any{"sidecarContainers": []any{nil}}), "spec.sidecarContainers[0]: expected object, got null"},
		{"sidecar args number", nimObject(map[string]any{"sidecarContainers": []any{map[string]any{"args": int64(1)}}}), "spec.sidecarContainers[0].args"},
		{"storage list", nimObject(map[string]any{"storage": []any{}}), "spec.storage: expected object, got list"},
		{"nimCache string", nimObject(map[string]any{"storage": map[string]any{"nimCache": "c"}}), "spec.storage.nimCache: expected object, got string"},
		{"nimCache name number", nimObject(map[string]any{"storage": map[string]any{"nimCache": map[string]any{"name": int64(1)}}}), "spec.storage.nimCache.name: expected string, got number"},
		{"pvc string", nimObject(map[string]any{"storage": map[string]any{"pvc": "p"}}), "spec.storage.pvc: expected object, got string"},
		{"pvc name list", nimObject(map[string]any{"storage": map[string]any{"pvc": map[string]any{"name": []any{}}}}), "spec.storage.pvc.name: expected string, got list"},
		{"hostPath object", nimObject(map[string]any{"storage": map[string]any{"hostPath": map[string]any{"path": "/x"}}}), "spec.storage.hostPath: expected string, got object"},
		{"emptyDir string", nimObject(map[string]any{"storage": map[string]any{"emptyDir": "x"}}), "spec.storage.emptyDir: expected object, got string"},
		{"multiNode list", nimObject(map[string]any{"multiNode": []any{}}), "spec.multiNode: expected object, got list"},
		{"parallelism number", nimObject(map[string]any{"multiNode": map[string]any{"parallelism": int64(2)}}), "spec.multiNode.parallelism: expected object, got number"},
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
	bare := func(extra ...string) adapter.Findings {
		return adapter.Findings{
			Scrapers:   scrapers,
			Containers: []adapter.Container{{Name: "n-ctr", PodNames: podNames("n"), Evidence: ev(adapter.SourceImageReference, "spec.image")}},
			Runtimes:   nimRuntime(""),
			Properties: props(append(extra, "nim.inferencePlatform", "standalone")...),
		}
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want adapter.Findings
	}{
		{"no spec", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService", "metadata": map[string]any{"name": "n"}}}, bare()},
		{"null spec", nimObject(nil), bare()},
		{"nulls everywhere", nimObject(map[string]any{"image": nil, "args": nil, "env": nil, "storage": nil, "multiNode": nil,
			"initContainers": nil, "sidecarContainers": nil, "annotations": nil, "inferencePlatform": nil, "replicas": nil}), bare()},
		{"null parts", nimObject(map[string]any{"image": map[string]any{"repository": nil, "tag": nil},
			"storage":   map[string]any{"nimCache": nil, "pvc": nil, "hostPath": nil, "emptyDir": nil},
			"multiNode": map[string]any{"parallelism": nil}}), bare("nim.multiNode.backendType", "lws")},
		{"wrong scalar types skipped", nimObject(map[string]any{"replicas": "1", "inferencePlatform": int64(1), "authSecret": []any{},
			"storage":   map[string]any{"nimCache": map[string]any{"profile": int64(1)}, "pvc": map[string]any{"create": "yes", "size": []any{}, "subPath": true}, "readOnly": "no"},
			"multiNode": map[string]any{"backendType": int64(1), "parallelism": map[string]any{"pipeline": "2", "tensor": 2.5}, "size": "x"}}),
			bare("nim.multiNode.backendType", "lws")},
		{"pvc create without name", nimObject(map[string]any{"storage": map[string]any{"pvc": map[string]any{"create": true, "size": int64(1 << 30)}}}),
			func() adapter.Findings {
				f := bare("nim.storage.pvc.create", "true", "nim.storage.pvc.size", "1073741824")
				f.Data = []adapter.Data{{Name: "n-pvc", Kind: "pvc", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.storage.pvc.create")}}
				return f
			}()},
		{"emptyDir without limit", nimObject(map[string]any{"storage": map[string]any{"emptyDir": map[string]any{}}}),
			func() adapter.Findings {
				f := bare("nim.storage.emptyDir", "true")
				f.Data = []adapter.Data{{Name: "emptyDir", Kind: "emptyDir", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.storage.emptyDir")}}
				return f
			}()},
		{"older multiNode size", nimObject(map[string]any{"multiNode": map[string]any{"size": int64(2), "gpusPerPod": float64(8)}}),
			bare("nim.multiNode.backendType", "lws", "nim.multiNode.size", "2", "nim.multiNode.gpusPerPod", "8")},
		{"metadata annotations number", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMService",
			"metadata": map[string]any{"name": "n", "annotations": map[string]any{"model.aibom.dev/x": int64(1)}}}}, bare()},
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
	env := make([]any, n)
	args := make([]any, n)
	inits := make([]any, n)
	for i := 0; i < n; i++ {
		env[i] = map[string]any{"name": fmt.Sprintf("V%d", i), "value": "x"}
		args[i] = fmt.Sprintf("--flag-%d", i)
		inits[i] = map[string]any{"name": fmt.Sprintf("i%d", i), "image": "busybox"}
	}
	env = append(env, map[string]any{"name": "NIM_MODEL_NAME", "value": "m"})
	f, err := New().Scrape(context.Background(), nimObject(map[string]any{
		"image": image("nvcr.io/nim/meta/x", "1.0.0"), "env": env, "args": args, "initContainers": inits}))
	require.NoError(t, err)
	require.Len(t, f.Containers, n+1)
	require.Equal(t, []adapter.Model{{Name: "m", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceEnvVar, fmt.Sprintf("spec.env[%d](NIM_MODEL_NAME)", n))}}, f.Models)

	inits = append(inits, "bad")
	_, err = New().Scrape(context.Background(), nimObject(map[string]any{"initContainers": inits}))
	require.ErrorContains(t, err, fmt.Sprintf("spec.initContainers[%d]", n))
}

func TestModelFromImage(t *testing.T) {
	for in, want := range map[string]string{
		"nvcr.io/nim/meta/llama-3.2-1b-instruct":        "meta/llama-3.2-1b-instruct",
		"nvcr.io/nim/meta/llama-3.2-1b-instruct:1.12.0": "meta/llama-3.2-1b-instruct",
		"NVCR.IO/nim/meta/x":                            "meta/x",
		"nvcr.io/nim/nvidia/llm-nim":                    "",
		"nvcr.io/nim/meta":                              "",
		"nvcr.io/nim/a/b/c":                             "",
		"nvcr.io/nvidia/tritonserver":                   "",
		"":                                              "",
	} {
		got, ok := ModelFromImage(in)
		require.Equal(t, want, got, in)
		require.Equal(t, want != "", ok, in)
	}
}

// FuzzScrape feeds arbitrary JSON objects to Scrape as a NIMService: it must
// never panic, and must give the same result twice.
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
		`{}`, `null`, `{"spec":null}`, `{"metadata":{"name":7},"spec":{"image":{"repository":"nvcr.io/nim/a/b","tag":"sha256:x"}}}`,
		`{"spec":{"storage":{"pvc":{"create":true},"emptyDir":{"sizeLimit":1e300}},"multiNode":{"parallelism":{"tensor":-1}}}}`,
		`{"spec":{"env":[{"name":"NGC_API_KEY","value":"nvapi-abcdefghijklmnopqrstuvwxyz"}],"sidecarContainers":[{"restartPolicy":"Always"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		obj["apiVersion"] = "apps.nvidia.com/v1alpha1"
		obj["kind"] = "NIMService"
		u := &unstructured.Unstructured{Object: obj}
		first, err1 := New().Scrape(context.Background(), u)
		second, err2 := New().Scrape(context.Background(), u)
		require.Equal(t, err1, err2)
		require.Equal(t, first, second)
		if err1 != nil {
			require.Equal(t, adapter.Findings{}, first)
		}
		ModelFromImage(string(data))
	})
}

// A tag written as a YAML number ("tag: 1.8") is read as the text it was
// written as, not refused: the rest of the document is not lost for it.
func TestScrapeNumericTag(t *testing.T) {
	f, err := New().Scrape(context.Background(), nimObject(map[string]any{"image": map[string]any{"repository": "nvcr.io/nim/meta/llama-3.2-1b-instruct", "tag": 1.8}}))
	require.NoError(t, err)
	require.Equal(t, "nvcr.io/nim/meta/llama-3.2-1b-instruct:1.8", f.Containers[0].Image)
	require.Equal(t, nimRuntime("1.8"), f.Runtimes)
}
