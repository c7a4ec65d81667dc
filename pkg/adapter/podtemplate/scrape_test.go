package podtemplate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// fromYAML decodes a YAML document into unstructured form.
func fromYAML(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
	return m
}

const vllmTemplate = `
metadata:
  labels: {app: llama}
  annotations:
    model.aibom.dev/adapter: org/llama-lora@v2
    prometheus.io/scrape: "true"
spec:
  initContainers:
  - name: fetch
    image: busybox:1.36
    command: [sh, -c, "echo fetch"]
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.3
    args: ["--port", "8000", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size=2"]
    env:
    - name: HF_TOKEN
      valueFrom: {secretKeyRef: {name: hf, key: token}}
    - name: HF_MODEL_ID
      value: meta-llama/Llama-3.1-8B-Instruct
    resources:
      limits: {nvidia.com/gpu: 2}
    volumeMounts:
    - {name: cache, mountPath: /root/.cache/huggingface}
    - {name: shm, mountPath: /dev/shm}
  volumes:
  - name: cache
    persistentVolumeClaim: {claimName: llama-cache}
  - name: shm
    emptyDir: {medium: Memory, sizeLimit: 2Gi}
`

func TestScrapeTemplateVLLM(t *testing.T) {
	f, err := ScrapeTemplate(fromYAML(t, vllmTemplate), "spec.template", Options{
		WorkloadAnnotations: map[string]string{"model.aibom.dev/name": "meta-llama/Llama-3.1-8B-Instruct", "team": "ml"},
	})
	require.NoError(t, err)
	const c0 = "spec.template.spec.containers[0]"
	require.Equal(t, adapter.Findings{
		Scrapers: []adapter.Scraper{{Name: "podtemplate", Version: ScraperVersion, Method: "pod-template"}},
		Containers: []adapter.Container{
			{Name: "fetch", Image: "busybox:1.36", Init: true, Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: "spec.template.spec.initContainers[0].image"}},
			{Name: "vllm", Image: "vllm/vllm-openai:v0.6.3", Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: c0 + ".image"}},
		},
		Runtimes: []adapter.Runtime{
			{Name: "vllm", Version: "v0.6.3", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: c0 + ".image"}},
		},
		Models: []adapter.Model{
			{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceWorkloadAnnotation, Locator: "metadata.annotations[model.aibom.dev/name]"}},
			{Name: "org/llama-lora", Version: "v2", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourcePodTemplateAnnotation, Locator: "spec.template.metadata.annotations[model.aibom.dev/adapter]"}},
			{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared, Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: c0 + ".args[2](--model)"}},
			{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: c0 + ".env[1](HF_MODEL_ID)"}},
		},
		Data: []adapter.Data{
			{Name: "cache (llama-cache)", Kind: "pvc", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: c0 + ".volumeMounts[0](/root/.cache/huggingface)"}},
		},
		Accelerators: []adapter.Accelerator{
			{Resource: "nvidia.com/gpu", Quantity: "2", Evidence: adapter.Evidence{Source: adapter.SourceResourceRequest, Locator: c0 + ".resources.limits[nvidia.com/gpu]"}},
		},
	}, f)
}

// container wraps one container in a template.
func container(c map[string]any, volumes ...any) map[string]any {
	spec := map[string]any{"containers": []any{c}}
	if volumes != nil {
		spec["volumes"] = volumes
	}
	return map[string]any{"spec": spec}
}

func TestScrapeTemplateEnv(t *testing.T) {
	const loc = "spec.template.spec.containers[0].env"
	tests := []struct {
		name       string
		env        []any
		models     []adapter.Model
		redactions []adapter.Redaction
	}{
		{name: "model env names", env: []any{
			map[string]any{"name": "HF_MODEL_ID", "value": "a/b"},
			map[string]any{"name": "MODEL_NAME", "value": "c"},
			map[string]any{"name": "NIM_MODEL_NAME", "value": "d"},
			map[string]any{"name": "NIM_SERVED_MODEL_NAME", "value": "e"},
		}, models: []adapter.Model{
			{Name: "a/b", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc + "[0](HF_MODEL_ID)"}},
			{Name: "c", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc + "[1](MODEL_NAME)"}},
			{Name: "d", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc + "[2](NIM_MODEL_NAME)"}},
			{Name: "e", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc + "[3](NIM_SERVED_MODEL_NAME)"}},
		}},
		{name: "other names", env: []any{
			map[string]any{"name": "MODEL", "value": "x"},
			map[string]any{"name": "hf_model_id", "value": "x"},
			map[string]any{"name": "MODEL_NAME_SUFFIX", "value": "x"},
			map[string]any{"name": "MODEL_TYPE", "value": "llama"},
			map[string]any{"name": "MAX_MODEL_LEN", "value": "4096"},
		}, models: []adapter.Model{
			{Name: "x", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc + "[0](MODEL)"}},
			{Name: "x", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc + "[1](hf_model_id)"}},
		}},
		{name: "valueFrom", env: []any{
			map[string]any{"name": "HF_MODEL_ID", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "cm", "key": "model"}}},
			map[string]any{"name": "MODEL_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
		}},
		{name: "empty and null values", env: []any{
			map[string]any{"name": "HF_MODEL_ID", "value": ""},
			map[string]any{"name": "MODEL_NAME", "value": nil},
			map[string]any{"name": "NIM_MODEL_NAME"},
		}},
		{name: "secret names withheld", env: []any{
			map[string]any{"name": "HF_TOKEN", "value": tokHF},
			map[string]any{"name": "NGC_API_KEY", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "ngc", "key": "key"}}},
			map[string]any{"name": "DB_PASSWORD", "value": ""},
		}, redactions: []adapter.Redaction{{Locator: loc + "[0](HF_TOKEN)", Reason: ReasonSecretName}}},
		{name: "token in model env", env: []any{map[string]any{"name": "MODEL_NAME", "value": "org/m-" + tokHF}},
			models:     []adapter.Model{{Name: "org/m-REDACTED", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc + "[0](MODEL_NAME)"}}},
			redactions: []adapter.Redaction{{Locator: loc + "[0](MODEL_NAME)", Reason: ReasonToken}}},
		{name: "unicode", env: []any{map[string]any{"name": "MODEL_NAME", "value": "модель-🦙"}},
			models: []adapter.Model{{Name: "модель-🦙", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceEnvVar, Locator: loc + "[0](MODEL_NAME)"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ScrapeTemplate(container(map[string]any{"name": "c", "image": "img", "env": tt.env}), "spec.template", Options{})
			require.NoError(t, err)
			require.Equal(t, tt.models, f.Models)
			require.Equal(t, tt.redactions, f.Redactions)
		})
	}
}

func TestScrapeTemplateVolumes(t *testing.T) {
	mount := func(path string) map[string]any {
		return map[string]any{"name": "c", "image": "img", "volumeMounts": []any{
			map[string]any{"name": "log", "mountPath": "/var/log"},
			map[string]any{"name": "vol", "mountPath": path},
		}}
	}
	vol := func(src string, v any) any { return map[string]any{"name": "vol", src: v} }
	const loc = "spec.template.spec.containers[0].volumeMounts[1]"
	tests := []struct {
		name, path string
		volumes    []any
		claims     []string
		want       []adapter.Data
	}{
		{"pvc", "/models", []any{map[string]any{"name": "other"}, vol("persistentVolumeClaim", map[string]any{"claimName": "llama"})}, nil,
			[]adapter.Data{{Name: "vol (llama)", Kind: "pvc", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/models)"}}}},
		{"hostPath below", "/models/llama", []any{vol("hostPath", map[string]any{"path": "/mnt/models", "type": "Directory"})}, nil,
			[]adapter.Data{{Name: "vol (/mnt/models)", Kind: "hostPath", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/models/llama)"}}}},
		{"emptyDir", "/weights", []any{vol("emptyDir", map[string]any{"sizeLimit": "100Gi"})}, nil,
			[]adapter.Data{{Name: "vol", Kind: "emptyDir", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/weights)"}}}},
		{"empty emptyDir", "/model", []any{vol("emptyDir", map[string]any{})}, nil,
			[]adapter.Data{{Name: "vol", Kind: "emptyDir", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/model)"}}}},
		{"configMap", "/checkpoints", []any{vol("configMap", map[string]any{"name": "cfg"})}, nil,
			[]adapter.Data{{Name: "vol (cfg)", Kind: "configMap", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/checkpoints)"}}}},
		{"image volume", "/hf_cache", []any{vol("image", map[string]any{"reference": "quay.io/org/modelcar:1"})}, nil,
			[]adapter.Data{{Name: "vol (quay.io/org/modelcar:1)", Kind: "image", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/hf_cache)"}}}},
		{"nfs", "/models", []any{vol("nfs", map[string]any{"server": "nfs.example", "path": "/export"})}, nil,
			[]adapter.Data{{Name: "vol (nfs.example:/export)", Kind: "nfs", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/models)"}}}},
		{"unknown source", "/models", []any{vol("gitRepo", map[string]any{"repository": "x"})}, nil,
			[]adapter.Data{{Name: "vol", Kind: "volume", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/models)"}}}},
		{"missing volume", "/models", nil, nil,
			[]adapter.Data{{Name: "vol", Kind: "volume", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/models)"}}}},
		{"claim template", "/models", nil, []string{"vol"},
			[]adapter.Data{{Name: "vol (volumeClaimTemplate)", Kind: "pvc", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: loc + "(/models)"}}}},
		{"not a boundary", "/models-shared", []any{vol("persistentVolumeClaim", map[string]any{"claimName": "x"})}, nil, nil},
		{"other path", "/data", []any{vol("persistentVolumeClaim", map[string]any{"claimName": "x"})}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ScrapeTemplate(container(mount(tt.path), tt.volumes...), "spec.template", Options{VolumeClaimTemplates: tt.claims})
			require.NoError(t, err)
			require.Equal(t, tt.want, f.Data)
		})
	}
}

func TestScrapeTemplateRuntimes(t *testing.T) {
	tmpl := fromYAML(t, `
spec:
  initContainers:
  - {name: warm, image: "vllm/vllm-openai:v0.6.3"}
  - {name: proxy, image: "ghcr.io/berriai/litellm:1.55.0", restartPolicy: Always}
  containers:
  - {name: app, image: "myregistry.example/vllm-openai:v0.6.3"}
  - {name: tgi, image: "ghcr.io/huggingface/text-generation-inference:latest"}
`)
	f, err := ScrapeTemplate(tmpl, "spec.template", Options{Group: "decode"})
	require.NoError(t, err)
	require.Equal(t, []adapter.Runtime{
		{Name: "litellm", Version: "1.55.0", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: "spec.template.spec.initContainers[1].image"}},
		// A mirror is the runtime too, but its tag does not version it.
		{Name: "vllm", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: "spec.template.spec.containers[0].image"}},
		{Name: "tgi", Confidence: adapter.Inferred, Evidence: adapter.Evidence{Source: adapter.SourceImagePattern, Locator: "spec.template.spec.containers[1].image"}},
	}, f.Runtimes)
	require.Len(t, f.Containers, 4)
	for _, c := range f.Containers {
		require.Equal(t, "decode", c.Group)
	}
	require.Equal(t, []bool{true, true, false, false}, []bool{f.Containers[0].Init, f.Containers[1].Init, f.Containers[2].Init, f.Containers[3].Init})
}

func TestScrapeTemplateEmpty(t *testing.T) {
	want := adapter.Findings{Scrapers: []adapter.Scraper{Scraper()}}
	for name, tmpl := range map[string]map[string]any{
		"nil":           nil,
		"empty":         {},
		"null spec":     {"spec": nil, "metadata": nil},
		"no containers": {"spec": map[string]any{"containers": []any{}, "initContainers": nil}},
		"no annotations": {"metadata": map[string]any{"annotations": nil, "labels": map[string]any{"x": 1}},
			"spec": map[string]any{}},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := ScrapeTemplate(tmpl, "spec.template", Options{})
			require.NoError(t, err)
			require.Equal(t, want, f)
		})
	}
}

func TestScrapeTemplateErrors(t *testing.T) {
	c := func(kv ...any) map[string]any {
		m := map[string]any{"name": "c", "image": "img"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		tmpl map[string]any
		want string // the error must contain it
	}{
		{"spec string", map[string]any{"spec": "x"}, "spec.template.spec: expected object, got string"},
		{"metadata list", map[string]any{"metadata": []any{}}, "spec.template.metadata: expected object, got list"},
		{"annotations string", map[string]any{"metadata": map[string]any{"annotations": "x"}}, "spec.template.metadata.annotations: expected object, got string"},
		{"model annotation number", map[string]any{"metadata": map[string]any{"annotations": map[string]any{"model.aibom.dev/x": int64(3)}}},
			"spec.template.metadata.annotations[model.aibom.dev/x]: expected string, got number"},
		{"containers string", map[string]any{"spec": map[string]any{"containers": "vllm"}}, "spec.template.spec.containers: expected list, got string"},
		{"initContainers map", map[string]any{"spec": map[string]any{"initContainers": map[string]any{}}}, "spec.template.spec.initContainers: expected list, got object"},
		{"container string", map[string]any{"spec": map[string]any{"containers": []any{c(), "x"}}}, "spec.template.spec.containers[1]: expected object, got string"},
		{"container null", map[string]any{"spec": map[string]any{"containers": []any{nil}}}, "spec.template.spec.containers[0]: expected object, got null"},
		{"args map", container(c("args", map[string]any{"a": "b"})), "spec.template.spec.containers[0].args:"},
		{"args element number", container(c("args", []any{"--model", int64(7)})), "spec.template.spec.containers[0].args[1]:"},
		{"command string", container(c("command", "vllm serve")), "spec.template.spec.containers[0].command:"},
		{"image number", container(c("image", int64(1))), "spec.template.spec.containers[0].image:"},
		{"name list", container(c("name", []any{})), "spec.template.spec.containers[0].name:"},
		{"env element string", container(c("env", []any{map[string]any{"name": "A", "value": "b"}, "B=c"})), "spec.template.spec.containers[0].env[1]:"},
		{"env value number", container(c("env", []any{map[string]any{"name": "MODEL_NAME", "value": int64(1)}})), "spec.template.spec.containers[0].env[0]:"},
		{"volumeMounts string", container(c("volumeMounts", "x")), "spec.template.spec.containers[0].volumeMounts:"},
		{"volume pvc string", container(c("volumeMounts", []any{map[string]any{"name": "v", "mountPath": "/models"}}),
			map[string]any{"name": "v", "persistentVolumeClaim": "x"}), "spec.template.spec.volumes[0].persistentVolumeClaim:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ScrapeTemplate(tt.tmpl, "spec.template", Options{})
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.Equal(t, adapter.Findings{}, f)
		})
	}

	// volumes that are not a list fail only when a model mount needs them.
	tmpl := map[string]any{"spec": map[string]any{"volumes": "x", "containers": []any{c("volumeMounts", []any{map[string]any{"name": "v", "mountPath": "/models"}})}}}
	_, err := ScrapeTemplate(tmpl, "spec.template", Options{})
	require.EqualError(t, err, "spec.template.spec.volumes: expected list, got string")
}

func TestScrapeTemplateIgnoresUnreadFields(t *testing.T) {
	tmpl := container(map[string]any{
		"name": "c", "image": "vllm/vllm-openai:v0.6.3",
		"resources":      map[string]any{"limits": map[string]any{"cpu": []any{"not a quantity"}}},
		"ports":          "8000",
		"readinessProbe": int64(3),
		"volumeMounts":   []any{map[string]any{"name": "v", "mountPath": "/models"}},
	}, "junk", map[string]any{"name": "v", "emptyDir": map[string]any{"sizeLimit": "lots"}})
	tmpl["metadata"] = map[string]any{"annotations": map[string]any{"other": int64(1)}, "labels": "x"}
	f, err := ScrapeTemplate(tmpl, "spec.template", Options{})
	require.NoError(t, err)
	require.Len(t, f.Runtimes, 1)
	require.Equal(t, "emptyDir", f.Data[0].Kind)
}

func TestScrapeTemplateHugeArgs(t *testing.T) {
	args := make([]any, 0, 100_001)
	for i := 0; i < 100_000; i++ {
		args = append(args, fmt.Sprintf("--flag-%d=%d", i, i))
	}
	args = append(args, "--model=org/last")
	f, err := ScrapeTemplate(container(map[string]any{"name": "c", "image": "img", "args": args}), "spec.template", Options{})
	require.NoError(t, err)
	require.Len(t, f.Models, 1)
	require.Equal(t, "org/last", f.Models[0].Name)
	require.Equal(t, "spec.template.spec.containers[0].args[100000](--model)", f.Models[0].Evidence.Locator)
}

func TestScrapeTemplateUnicode(t *testing.T) {
	f, err := ScrapeTemplate(container(map[string]any{"name": "контейнер-🚀", "image": "例え/画像:v1.0", "args": []any{"--model", "模型"}}), "spec.template", Options{})
	require.NoError(t, err)
	require.Equal(t, "контейнер-🚀", f.Containers[0].Name)
	require.Equal(t, "模型", f.Models[0].Name)
}

func TestScrapeTemplateDeterministic(t *testing.T) {
	ann := map[string]string{}
	for i := 0; i < 20; i++ {
		ann[fmt.Sprintf("model.aibom.dev/m%02d", i)] = fmt.Sprintf("org/m%d", i)
	}
	tmpl := fromYAML(t, vllmTemplate)
	first, err := ScrapeTemplate(tmpl, "spec.template", Options{WorkloadAnnotations: ann})
	require.NoError(t, err)
	want, err := json.Marshal(first)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		f, err := ScrapeTemplate(tmpl, "spec.template", Options{WorkloadAnnotations: ann})
		require.NoError(t, err)
		got, err := json.Marshal(f)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
	require.Equal(t, "metadata.annotations[model.aibom.dev/m00]", first.Models[0].Evidence.Locator)
	require.Equal(t, "metadata.annotations[model.aibom.dev/m19]", first.Models[19].Evidence.Locator)
}

func TestScrapeTemplateNoSecretLeaks(t *testing.T) {
	tokens := []string{tokHF, tokGHP, tokGHO, tokGHPAT, tokNV, tokSK, tokAWS, tokJWT, tokHex, tokBase64, "hunter2pass"}
	tmpl := fromYAML(t, `
metadata:
  annotations:
    model.aibom.dev/name: "org/model-`+tokNV+`"
    model.aibom.dev/api-key: "`+tokSK+`"
spec:
  containers:
  - name: server
    image: vllm/vllm-openai:v0.6.3
    command: ["sh", "-c", "vllm serve --model https://me:hunter2pass@hf.example/org/m --api-key `+tokSK+`"]
    args:
    - --model=`+tokHF+`
    - --served-model-name
    - "`+tokJWT+`"
    - --model-path=/cache/`+tokHex+`
    - --model-id=s3://bucket/m?X-Amz-Security-Token=`+tokBase64+`
    - --hf-token=`+tokGHP+`
    env:
    - {name: HF_TOKEN, value: "`+tokHF+`"}
    - {name: GITHUB_TOKEN, value: "`+tokGHO+`"}
    - {name: AWS_ACCESS_KEY_ID, value: "`+tokAWS+`"}
    - {name: MODEL_NAME, value: "`+tokGHPAT+`"}
    - {name: NIM_MODEL_NAME, value: "`+tokBase64+`"}
    volumeMounts:
    - {name: w, mountPath: /models}
  volumes:
  - name: w
    hostPath: {path: "/mnt/`+tokHex+`"}
`)
	f, err := ScrapeTemplate(tmpl, "spec.template", Options{WorkloadAnnotations: map[string]string{
		"model.aibom.dev/name":  "https://user:" + tokHF + "@models.example/llama",
		"model.aibom.dev/token": tokGHP,
	}})
	require.NoError(t, err)
	out, err := json.Marshal(f)
	require.NoError(t, err)
	for _, tok := range tokens {
		require.NotContains(t, string(out), tok)
	}
	require.NotEmpty(t, f.Redactions)
	for _, r := range f.Redactions {
		require.Contains(t, []string{ReasonSecretName, ReasonURLCredentials, ReasonToken}, r.Reason)
		require.NotEmpty(t, r.Locator)
	}
	// Every model or data name that changed has a redaction at its locator.
	located := map[string]bool{}
	for _, r := range f.Redactions {
		located[r.Locator] = true
	}
	for _, m := range f.Models {
		if strings.Contains(m.Name, Redacted) {
			require.True(t, located[m.Evidence.Locator], m.Evidence.Locator)
		}
	}
	for _, d := range f.Data {
		require.True(t, located[d.Evidence.Locator], d.Evidence.Locator)
	}
	require.Contains(t, f.Redactions, adapter.Redaction{Locator: "spec.template.spec.containers[0].env[0](HF_TOKEN)", Reason: ReasonSecretName})
	require.Contains(t, f.Redactions, adapter.Redaction{Locator: "metadata.annotations[model.aibom.dev/token]", Reason: ReasonSecretName})
}

func TestScrapePodSpec(t *testing.T) {
	spec := fromYAML(t, `
containers:
- name: main
  image: lmsysorg/sglang:v0.4.1
  command: [python3, -m, sglang.launch_server]
  args: [--model-path, Qwen/Qwen2.5-7B-Instruct]
`)
	f, err := ScrapePodSpec(spec, "spec.podSpec", Options{Group: "prefill", WorkloadAnnotations: map[string]string{"model.aibom.dev/m": "x"}})
	require.NoError(t, err)
	require.Equal(t, []adapter.Scraper{Scraper()}, f.Scrapers)
	require.Equal(t, "spec.podSpec.containers[0].image", f.Containers[0].Evidence.Locator)
	require.Equal(t, "prefill", f.Containers[0].Group)
	require.Equal(t, "sglang", f.Runtimes[0].Name)
	require.Len(t, f.Models, 2)
	require.Equal(t, "metadata.annotations[model.aibom.dev/m]", f.Models[0].Evidence.Locator)
	require.Equal(t, adapter.Model{Name: "Qwen/Qwen2.5-7B-Instruct", Confidence: adapter.Declared,
		Evidence: adapter.Evidence{Source: adapter.SourceContainerArg, Locator: "spec.podSpec.containers[0].args[0](--model-path)"}}, f.Models[1])

	_, err = ScrapePodSpec(map[string]any{"containers": map[string]any{}}, "spec.podSpec", Options{})
	require.EqualError(t, err, "spec.podSpec.containers: expected list, got object")
}

func TestScrapeContainer(t *testing.T) {
	c := map[string]any{
		"name": "main", "image": "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3",
		"env":          []any{map[string]any{"name": "NIM_MODEL_NAME", "value": "meta/llama-3.1-8b-instruct"}},
		"volumeMounts": []any{map[string]any{"name": "cache", "mountPath": "/model"}},
	}
	vols := []any{map[string]any{"name": "cache", "persistentVolumeClaim": map[string]any{"claimName": "nim-cache"}}}
	const path = "spec.components[1].mainContainer"
	f, err := ScrapeContainer(c, path, ContainerOptions{Group: "worker", Volumes: vols, VolumesPath: "spec.components[1].volumes"})
	require.NoError(t, err)
	require.Empty(t, f.Scrapers)
	require.Equal(t, []adapter.Container{{Name: "main", Image: "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", Group: "worker",
		Evidence: adapter.Evidence{Source: adapter.SourceImageReference, Locator: path + ".image"}}}, f.Containers)
	require.Equal(t, "nim", f.Runtimes[0].Name)
	require.Equal(t, "meta/llama-3.1-8b-instruct", f.Models[0].Name)
	require.Equal(t, adapter.Data{Name: "cache (nim-cache)", Kind: "pvc", Confidence: adapter.Inferred,
		Evidence: adapter.Evidence{Source: adapter.SourceVolumeSource, Locator: path + ".volumeMounts[0](/model)"}}, f.Data[0])

	f, err = ScrapeContainer(map[string]any{"image": "vllm/vllm-openai"}, "x", ContainerOptions{Init: true})
	require.NoError(t, err)
	require.True(t, f.Containers[0].Init)
	require.Empty(t, f.Runtimes)

	_, err = ScrapeContainer(nil, "x", ContainerOptions{})
	require.EqualError(t, err, "x: expected object, got null")

	_, err = ScrapeContainer(map[string]any{"volumeMounts": []any{map[string]any{"name": "v", "mountPath": "/models"}}}, "x",
		ContainerOptions{Volumes: []any{map[string]any{"name": "v", "hostPath": "bad"}}})
	require.ErrorContains(t, err, "volumes[0].hostPath:")
}

func TestMergeFindings(t *testing.T) {
	a, err := ScrapeTemplate(container(map[string]any{"name": "a", "image": "vllm/vllm-openai:v0.6.3"}), "spec.a", Options{})
	require.NoError(t, err)
	b, err := ScrapeTemplate(container(map[string]any{"name": "b", "image": "img"}), "spec.b", Options{})
	require.NoError(t, err)
	other := adapter.Findings{Scrapers: []adapter.Scraper{{Name: "dynamo", Version: "1", Method: "crd-spec"}}}
	var f adapter.Findings
	MergeFindings(&f, other)
	MergeFindings(&f, a)
	MergeFindings(&f, b)
	MergeFindings(&f, other)
	require.Equal(t, []adapter.Scraper{other.Scrapers[0], Scraper()}, f.Scrapers)
	require.Len(t, f.Containers, 2)
	require.Len(t, f.Runtimes, 1)
}
