package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

var update = flag.Bool("update", false, "rewrite the golden documents in testdata/")

const (
	digestA = "sha256:" + "a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4"
	digestB = "sha256:" + "0b2a7c2c37c8a4b2d7f0e4c5d3a1e6f7081929a3b4c5d6e7f8091a2b3c4d5e6f"
	digestC = "sha256:" + "4ee6e1d9f3b6a1c9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5"
)

var tool = Tool{Name: ToolName, Version: "v0.1.0"}

func ev(src adapter.Source, loc string) adapter.Evidence {
	return adapter.Evidence{Source: src, Locator: loc}
}

// vllmDeployment is a plain vLLM Deployment whose digests were read from its
// pod.
func vllmDeployment() Input {
	return Input{
		Subject: Subject{APIVersion: "apps/v1", Group: "apps", Kind: "Deployment", Namespace: "ml", Name: "llama-server", UID: "6f1c2b9e-3d4a-4e5f-8a7b-1c2d3e4f5a6b"},
		Tool:    tool,
		Findings: adapter.Findings{
			Scrapers: []adapter.Scraper{{Name: "podtemplate", Version: "v1", Method: "pod-template"}},
			Containers: []adapter.Container{
				{Name: "vllm", Image: "vllm/vllm-openai:v0.6.3", Evidence: ev(adapter.SourceImageReference, "spec.template.spec.containers[0].image")},
				{Name: "fetch-model", Image: "busybox:1.36", Init: true, Evidence: ev(adapter.SourceImageReference, "spec.template.spec.initContainers[0].image")},
			},
			Runtimes: []adapter.Runtime{
				{Name: "vllm", Version: "v0.6.3", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.template.spec.containers[0].image")},
				{Name: "vllm", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerCommand, "spec.template.spec.containers[0].command[0](vllm)")},
			},
			Models: []adapter.Model{
				{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "spec.template.spec.containers[0].args[1](--model)")},
			},
			Data: []adapter.Data{
				{Name: "model-cache", Kind: "pvc", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceVolumeSource, "spec.template.spec.volumes[0](model-cache)")},
			},
			Properties: []adapter.Property{{Name: "apps.replicas", Value: "2"}},
			Redactions: []adapter.Redaction{{Locator: "spec.template.spec.containers[0].env[2].value(HF_TOKEN)", Reason: "token"}},
		},
		Digests: []ContainerDigest{
			{Digest: digestA, Confidence: adapter.Declared, Evidence: ev(adapter.SourcePodStatus, "pods/llama-server-7d9f8c6b5-x2x4z.status.containerStatuses[name=vllm].imageID")},
			{Digest: digestB, Confidence: adapter.Declared, Evidence: ev(adapter.SourcePodStatus, "pods/llama-server-7d9f8c6b5-x2x4z.status.initContainerStatuses[name=fetch-model].imageID")},
		},
	}
}

// rollup is a root that absorbed two tracked workloads.
func rollup() Input {
	return Input{
		Subject: Subject{APIVersion: "nvidia.com/v1alpha1", Group: "nvidia.com", Kind: "DynamoGraphDeployment", Namespace: "inference", Name: "disagg", UID: "0d6c7a1e-58f2-4f0b-9a51-2b7e0c3d4e5f"},
		Tool:    tool,
		Owned:   []string{"DynamoComponentDeployment.nvidia.com/disagg-prefill", "DynamoComponentDeployment.nvidia.com/disagg-decode"},
		Findings: adapter.Findings{
			Scrapers: []adapter.Scraper{
				{Name: "dynamo", Version: "v1", Method: "crd-spec"},
				{Name: "podtemplate", Version: "v1", Method: "pod-template"},
			},
			Containers: []adapter.Container{
				{Name: "main", Image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0", Group: "decode", Evidence: ev(adapter.SourceCRDField, "spec.services.decode.extraPodSpec.mainContainer.image")},
				{Name: "main", Image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0", Group: "prefill", Evidence: ev(adapter.SourceCRDField, "spec.services.prefill.extraPodSpec.mainContainer.image")},
			},
			Runtimes: []adapter.Runtime{
				{Name: "dynamo", Version: "0.4.0", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "apiVersion")},
				{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.services.decode.extraPodSpec.mainContainer.image")},
			},
			Models: []adapter.Model{
				{Name: "Qwen/Qwen3-0.6B", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "spec.services.decode.extraPodSpec.mainContainer.args[1](--model)")},
				{Name: "Qwen/Qwen3-0.6B", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "spec.services.prefill.extraPodSpec.mainContainer.args[1](--model)")},
			},
			Properties: []adapter.Property{
				{Name: "dynamo.component.1.type", Value: "worker"},
				{Name: "dynamo.component.0.type", Value: "worker"},
				{Name: "dynamo.component.0.name", Value: "decode"},
				{Name: "dynamo.component.1.name", Value: "prefill"},
			},
		},
		Digests: []ContainerDigest{
			{Digest: digestC, Confidence: adapter.Declared, Evidence: ev(adapter.SourcePodStatus, "pods/disagg-decode-0.status.containerStatuses[name=main].imageID")},
			{Digest: digestC, Confidence: adapter.Declared, Evidence: ev(adapter.SourcePodStatus, "pods/disagg-prefill-0.status.containerStatuses[name=main].imageID")},
		},
	}
}

// unresolvedJob is a workload whose pods have not pulled their image yet.
func unresolvedJob() Input {
	return Input{
		Subject: Subject{APIVersion: "batch/v1", Group: "batch", Kind: "Job", Namespace: "eval", Name: "nim-eval", UID: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"},
		Tool:    tool,
		Findings: adapter.Findings{
			Scrapers: []adapter.Scraper{{Name: "podtemplate", Version: "v1", Method: "pod-template"}},
			Containers: []adapter.Container{
				{Name: "nim", Image: "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", Evidence: ev(adapter.SourceImageReference, "spec.template.spec.containers[0].image")},
			},
			Runtimes: []adapter.Runtime{
				{Name: "nim", Version: "1.3.3", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.template.spec.containers[0].image")},
			},
			Models: []adapter.Model{
				{Name: "meta/llama-3.1-8b-instruct", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.template.spec.containers[0].image")},
			},
			Redactions: []adapter.Redaction{
				{Locator: "spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name(NGC_API_KEY)", Reason: "secret-name"},
			},
		},
		Digests: []ContainerDigest{{Confidence: adapter.Unresolved}},
	}
}

// large is a workload with many facts of every tier.
func large() Input {
	in := vllmDeployment()
	in.Subject.Name = "many-models"
	for i := range 6 {
		n := string(rune('a' + i))
		in.Findings.Models = append(in.Findings.Models, adapter.Model{Name: "org/model-" + n, Confidence: adapter.Declared, Evidence: ev(adapter.SourceWorkloadAnnotation, "metadata.annotations[aibom.dev/model-"+n+"]")})
		in.Findings.Data = append(in.Findings.Data, adapter.Data{Name: "cache-" + n, Kind: "volume", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceVolumeSource, "spec.template.spec.volumes["+n+"]")})
	}
	return in
}

func TestGolden(t *testing.T) {
	truncated := large()
	full, err := Build(truncated)
	require.NoError(t, err)
	// Too small by about four data components.
	truncated.MaxBytes = len(full.JSON) - 1500

	cases := map[string]Input{
		"vllm-deployment":   vllmDeployment(),
		"rollup":            rollup(),
		"unresolved-digest": unresolvedJob(),
		"truncated":         truncated,
		"empty":             {Subject: Subject{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "bare"}, Tool: tool},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := Build(in)
			require.NoError(t, err)
			require.NotContains(t, string(res.JSON), "\n  ", "the document is compact")
			// The golden files are indented, for review; the document is
			// compared with its indented form.
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, res.JSON, "", "  "))
			path := filepath.Join("testdata", name+".json")
			if *update {
				require.NoError(t, os.WriteFile(path, pretty.Bytes(), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./pkg/core/document -update")
			assert.Equal(t, string(want), pretty.String(), "golden %s is stale; run go test ./pkg/core/document -update", path)
			require.NoError(t, ValidateSchema(want), "golden %s", path)
		})
	}
}

// TestGoldenFilesValid validates every document under testdata/ against the
// CycloneDX 1.6 schema, whatever test wrote it.
func TestGoldenFilesValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 4)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.NoError(t, ValidateSchema(b), f)
	}
}

// doc decodes a built document generically.
type doc struct {
	BOMFormat    string `json:"bomFormat"`
	SpecVersion  string `json:"specVersion"`
	SerialNumber string `json:"serialNumber"`
	Version      int    `json:"version"`
	Metadata     struct {
		Timestamp string `json:"timestamp"`
		Tools     struct {
			Components []component `json:"components"`
		} `json:"tools"`
		Component  component  `json:"component"`
		Properties []property `json:"properties"`
	} `json:"metadata"`
	Components []component `json:"components"`
}

type component struct {
	BOMRef     string          `json:"bom-ref"`
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Version    string          `json:"version"`
	PURL       string          `json:"purl"`
	Hashes     []hash          `json:"hashes"`
	Properties []property      `json:"properties"`
	Evidence   json.RawMessage `json:"evidence"`
}

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func decode(t *testing.T, b []byte) doc {
	t.Helper()
	var d doc
	dec := json.NewDecoder(bytes.NewReader(b))
	require.NoError(t, dec.Decode(&d))
	return d
}

func prop(props []property, name string) (string, bool) {
	for _, p := range props {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

func names(props []property) []string {
	var out []string
	for _, p := range props {
		out = append(out, p.Name)
	}
	return out
}

func build(t *testing.T, in Input) (Result, doc) {
	t.Helper()
	res, err := Build(in)
	require.NoError(t, err)
	require.NoError(t, ValidateSchema(res.JSON))
	return res, decode(t, res.JSON)
}

func TestHeader(t *testing.T) {
	res, d := build(t, vllmDeployment())
	assert.Equal(t, "CycloneDX", d.BOMFormat)
	assert.Equal(t, "1.6", d.SpecVersion)
	assert.Equal(t, 1, d.Version)
	assert.Empty(t, d.Metadata.Timestamp)
	assert.Regexp(t, `^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, d.SerialNumber)
	assert.Contains(t, string(res.JSON), `"$schema":"http://cyclonedx.org/schema/bom-1.6.schema.json"`)
	assert.True(t, bytes.HasSuffix(res.JSON, []byte("}\n")))
	assert.Len(t, res.SHA256, 64)

	require.Len(t, d.Metadata.Tools.Components, 1)
	assert.Equal(t, component{Type: "application", Name: "aibom-controller", Version: "v0.1.0"}, d.Metadata.Tools.Components[0])

	subj := d.Metadata.Component
	assert.Equal(t, "application", subj.Type)
	assert.Equal(t, "llama-server", subj.Name)
	assert.Equal(t, "aibom:workload:Deployment.apps/ml/llama-server", subj.BOMRef)
	assert.Equal(t, []property{
		{"aibom.workload.kind", "Deployment"},
		{"aibom.workload.group", "apps"},
		{"aibom.workload.apiVersion", "apps/v1"},
		{"aibom.workload.namespace", "ml"},
		{"aibom.workload.uid", "6f1c2b9e-3d4a-4e5f-8a7b-1c2d3e4f5a6b"},
	}, subj.Properties)

	// The tool name defaults to ToolName.
	in := vllmDeployment()
	in.Tool.Name = ""
	_, d2 := build(t, in)
	assert.Equal(t, ToolName, d2.Metadata.Tools.Components[0].Name)
	// Native fields are not repeated as properties: the tool, the subject's
	// name.
	for _, p := range append(d2.Metadata.Properties, d2.Metadata.Component.Properties...) {
		assert.NotContains(t, []string{"aibom.controller.name", "aibom.controller.version", "aibom.workload.name"}, p.Name)
	}
}

func TestMetadataPropertyOrder(t *testing.T) {
	in := rollup()
	in.Findings.Redactions = []adapter.Redaction{
		{Locator: "spec.b", Reason: "token"},
		{Locator: "spec.a", Reason: "url-credentials"},
		{Locator: "spec.b", Reason: "token"},
	}
	res, d := build(t, in)
	assert.Equal(t, []property{
		{"aibom.confidence", "inferred"},
		{"aibom.rollup.owned.0", "DynamoComponentDeployment.nvidia.com/disagg-decode"},
		{"aibom.rollup.owned.1", "DynamoComponentDeployment.nvidia.com/disagg-prefill"},
		{"aibom.scrape.0.scraperName", "dynamo"},
		{"aibom.scrape.0.scraperVersion", "v1"},
		{"aibom.scrape.0.method", "crd-spec"},
		{"aibom.scrape.1.scraperName", "podtemplate"},
		{"aibom.scrape.1.scraperVersion", "v1"},
		{"aibom.scrape.1.method", "pod-template"},
		{"dynamo.component.0.name", "decode"},
		{"dynamo.component.0.type", "worker"},
		{"dynamo.component.1.name", "prefill"},
		{"dynamo.component.1.type", "worker"},
		{"aibom.redaction.0", "url-credentials:spec.a"},
		{"aibom.redaction.1", "token:spec.b"},
		{"aibom.match", "runtime:dynamo"},
	}, d.Metadata.Properties)
	assert.Zero(t, res.Truncated)
}

func TestOwnedSortedByKindThenName(t *testing.T) {
	in := vllmDeployment()
	in.Owned = []string{"LeaderWorkerSet.leaderworkerset.x-k8s.io/b", "Deployment.apps/z", "LeaderWorkerSet.leaderworkerset.x-k8s.io/a",
		"Deployment.example.com/z", "Service/z"}
	_, d := build(t, in)
	var owned []string
	for _, p := range d.Metadata.Properties {
		if strings.HasPrefix(p.Name, "aibom.rollup.owned.") {
			owned = append(owned, p.Name+"="+p.Value)
		}
	}
	// The same kind and name in two API groups are two entries: one
	// identity per absorbed object, never merged.
	assert.Equal(t, []string{
		"aibom.rollup.owned.0=Deployment.apps/z",
		"aibom.rollup.owned.1=Deployment.example.com/z",
		"aibom.rollup.owned.2=LeaderWorkerSet.leaderworkerset.x-k8s.io/a",
		"aibom.rollup.owned.3=LeaderWorkerSet.leaderworkerset.x-k8s.io/b",
		"aibom.rollup.owned.4=Service/z",
	}, owned)
	// Build sorted a copy.
	assert.Equal(t, "LeaderWorkerSet.leaderworkerset.x-k8s.io/b", in.Owned[0])
}

func TestNoRollupPropertiesWithoutOwned(t *testing.T) {
	_, d := build(t, vllmDeployment())
	for _, n := range names(d.Metadata.Properties) {
		assert.False(t, strings.HasPrefix(n, "aibom.rollup."), n)
		assert.NotEqual(t, "aibom.truncation.applied", n)
	}
}

func TestComponents(t *testing.T) {
	res, d := build(t, vllmDeployment())
	var got []string
	for _, c := range d.Components {
		got = append(got, c.Type+" "+c.Name+" "+c.Version)
		assert.Regexp(t, `^aibom:`+regexp.QuoteMeta(c.Type)+`:[0-9a-f]{16}$`, c.BOMRef)
		assert.Equal(t, "aibom.confidence", names(c.Properties)[0], c.Name)
	}
	assert.Equal(t, []string{
		"application vllm v0.6.3",
		"container docker.io/library/busybox 1.36",
		"container docker.io/vllm/vllm-openai v0.6.3",
		"data model-cache ",
		"machine-learning-model meta-llama/Llama-3.1-8B-Instruct ",
	}, got)

	vllm := d.Components[2]
	assert.Equal(t, []hash{{"SHA-256", strings.TrimPrefix(digestA, "sha256:")}}, vllm.Hashes)
	assert.Equal(t, "pkg:oci/vllm-openai@sha256%3A"+strings.TrimPrefix(digestA, "sha256:")+"?repository_url=docker.io%2Fvllm%2Fvllm-openai&tag=v0.6.3", vllm.PURL)
	assert.Equal(t, []property{
		{"aibom.confidence", "declared"},
		{"aibom.container.name", "vllm"},
		{"aibom.digest.confidence", "declared"},
		{"aibom.digest.source", "pod_status"},
		{"aibom.digest.locator", "pods/llama-server-7d9f8c6b5-x2x4z.status.containerStatuses[name=vllm].imageID"},
	}, vllm.Properties)

	initC := d.Components[1]
	v, ok := prop(initC.Properties, "aibom.container.init")
	assert.True(t, ok)
	assert.Equal(t, "true", v)
	_, ok = prop(vllm.Properties, "aibom.container.init")
	assert.False(t, ok)

	data := d.Components[3]
	v, _ = prop(data.Properties, "aibom.data.kind")
	assert.Equal(t, "pvc", v)

	assert.Equal(t, Summary{
		Runtime:    "vllm",
		Models:     []string{"meta-llama/Llama-3.1-8B-Instruct"},
		Images:     2,
		Confidence: adapter.Declared,
	}, res.Summary)
}

func TestContainerGroup(t *testing.T) {
	_, d := build(t, rollup())
	var groups []string
	containers := 0
	for _, c := range d.Components {
		if c.Type == "container" {
			containers++
			for _, p := range c.Properties {
				if p.Name == "aibom.container.group" {
					groups = append(groups, p.Value)
				}
			}
		}
	}
	// Both components run the same image: one container component, in
	// both groups.
	assert.Equal(t, 1, containers)
	assert.Equal(t, []string{"decode", "prefill"}, groups)
}

func TestUnresolvedDigest(t *testing.T) {
	for name, digests := range map[string][]ContainerDigest{
		"explicit": {{Confidence: adapter.Unresolved}},
		"missing":  nil,
	} {
		t.Run(name, func(t *testing.T) {
			in := unresolvedJob()
			in.Digests = digests
			_, d := build(t, in)
			require.Len(t, d.Components, 3)
			c := d.Components[1]
			require.Equal(t, "container", c.Type)
			assert.Equal(t, "nvcr.io/nim/meta/llama-3.1-8b-instruct", c.Name)
			assert.Equal(t, "1.3.3", c.Version)
			assert.Empty(t, c.Hashes)
			// A tag-only image has a purl too, with the tag and no version.
			assert.Equal(t, "pkg:oci/llama-3.1-8b-instruct?repository_url=nvcr.io%2Fnim%2Fmeta%2Fllama-3.1-8b-instruct&tag=1.3.3", c.PURL)
			v, _ := prop(c.Properties, "aibom.digest.confidence")
			assert.Equal(t, "unresolved", v)
			_, ok := prop(c.Properties, "aibom.digest.source")
			assert.False(t, ok)
		})
	}
}

func TestPinnedImageDigestUsedWhenNotResolved(t *testing.T) {
	in := unresolvedJob()
	in.Findings.Containers[0].Image = "nvcr.io/nim/meta/llama-3.1-8b-instruct@" + digestB
	in.Digests = nil
	_, d := build(t, in)
	c := d.Components[1]
	assert.Empty(t, c.Version)
	assert.Equal(t, []hash{{"SHA-256", strings.TrimPrefix(digestB, "sha256:")}}, c.Hashes)
	assert.Equal(t, "pkg:oci/llama-3.1-8b-instruct@sha256%3A"+strings.TrimPrefix(digestB, "sha256:")+"?repository_url=nvcr.io%2Fnim%2Fmeta%2Fllama-3.1-8b-instruct", c.PURL)
	v, _ := prop(c.Properties, "aibom.digest.source")
	assert.Equal(t, "image_reference", v)
	v, _ = prop(c.Properties, "aibom.digest.locator")
	assert.Equal(t, "spec.template.spec.containers[0].image", v)
}

func TestEmptyFindings(t *testing.T) {
	res, d := build(t, Input{Subject: Subject{Kind: "Pod", Name: "bare"}})
	assert.Empty(t, d.Components)
	var top map[string]any
	require.NoError(t, json.Unmarshal(res.JSON, &top))
	assert.NotContains(t, top, "components")
	v, _ := prop(d.Metadata.Properties, "aibom.confidence")
	assert.Equal(t, "unresolved", v)
	assert.Equal(t, Summary{Confidence: adapter.Unresolved}, res.Summary)
	assert.Equal(t, []string{"aibom.confidence", "aibom.match"}, names(d.Metadata.Properties))
	v, _ = prop(d.Metadata.Properties, "aibom.match")
	assert.Equal(t, "none", v, "no AI signal: the document says so")
}

func TestAggregateConfidence(t *testing.T) {
	rt := func(c adapter.Confidence) adapter.Runtime {
		return adapter.Runtime{Name: "rt-" + string(c), Confidence: c, Evidence: ev(adapter.SourceImagePattern, string(c))}
	}
	md := func(c adapter.Confidence) adapter.Model {
		return adapter.Model{Name: "m-" + string(c), Confidence: c, Evidence: ev(adapter.SourceContainerArg, string(c))}
	}
	for _, tc := range []struct {
		name     string
		runtimes []adapter.Runtime
		models   []adapter.Model
		data     []adapter.Data
		want     adapter.Confidence
		runtime  string
	}{
		{name: "none", want: adapter.Unresolved},
		{name: "only unresolved", runtimes: []adapter.Runtime{rt(adapter.Unresolved)}, models: []adapter.Model{md(adapter.Unresolved)}, want: adapter.Unresolved},
		{name: "declared", runtimes: []adapter.Runtime{rt(adapter.Declared)}, models: []adapter.Model{md(adapter.Declared)}, want: adapter.Declared, runtime: "rt-declared"},
		{name: "weakest wins", runtimes: []adapter.Runtime{rt(adapter.Declared)}, models: []adapter.Model{md(adapter.Inferred)}, want: adapter.Inferred, runtime: "rt-declared"},
		{name: "unresolved ignored", runtimes: []adapter.Runtime{rt(adapter.Unresolved), rt(adapter.Declared)}, want: adapter.Declared, runtime: "rt-declared"},
		{name: "strongest runtime", runtimes: []adapter.Runtime{rt(adapter.Inferred), rt(adapter.Declared)}, want: adapter.Inferred, runtime: "rt-declared"},
		{name: "one runtime claimed twice counts as its strongest claim", runtimes: []adapter.Runtime{
			{Name: "vllm", Confidence: adapter.Inferred, Evidence: ev(adapter.SourceImagePattern, "spec.image")},
			{Name: "vllm", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.backendFramework")},
		}, models: []adapter.Model{md(adapter.Declared)}, want: adapter.Declared, runtime: "vllm"},
		{name: "data does not count", data: []adapter.Data{{Name: "d", Kind: "pvc", Confidence: adapter.Inferred}}, want: adapter.Unresolved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Subject: Subject{Kind: "Pod", Name: "p"}, Findings: adapter.Findings{Runtimes: tc.runtimes, Models: tc.models, Data: tc.data}}
			res, d := build(t, in)
			assert.Equal(t, tc.want, res.Summary.Confidence)
			assert.Equal(t, tc.runtime, res.Summary.Runtime)
			v, _ := prop(d.Metadata.Properties, "aibom.confidence")
			assert.Equal(t, string(tc.want), v)
		})
	}
}

func TestSummaryRuntimeTieFirstBySort(t *testing.T) {
	in := Input{Subject: Subject{Kind: "Pod", Name: "p"}, Findings: adapter.Findings{Runtimes: []adapter.Runtime{
		{Name: "vllm", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "x")},
		{Name: "sglang", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "y")},
	}}}
	res, _ := build(t, in)
	assert.Equal(t, "sglang", res.Summary.Runtime)
}

func TestDeduplication(t *testing.T) {
	in := vllmDeployment()
	m := in.Findings.Models[0]
	weaker := m
	weaker.Confidence = adapter.Inferred
	in.Findings.Models = []adapter.Model{weaker, m, m}
	in.Findings.Runtimes = append(in.Findings.Runtimes, in.Findings.Runtimes...)
	in.Findings.Data = append(in.Findings.Data, in.Findings.Data...)
	res, d := build(t, in)
	ref, _ := build(t, vllmDeployment())
	assert.Equal(t, ref.JSON, res.JSON, "duplicates must not change the document")
	var models int
	for _, c := range d.Components {
		if c.Type == "machine-learning-model" {
			models++
			v, _ := prop(c.Properties, "aibom.confidence")
			assert.Equal(t, "declared", v, "the strongest duplicate is kept")
		}
	}
	assert.Equal(t, 1, models)

	// The same model read from two places is one component, with both
	// pieces of evidence.
	_, d = build(t, rollup())
	models = 0
	seen := map[string]bool{}
	for _, c := range d.Components {
		assert.False(t, seen[c.BOMRef], "bom-ref %s repeated", c.BOMRef)
		seen[c.BOMRef] = true
		if c.Type == "machine-learning-model" {
			models++
			assert.Equal(t, 2, strings.Count(string(c.Evidence), `"location"`), "both pieces of evidence are kept")
		}
	}
	assert.Equal(t, 1, models)
}

func TestDeterminism(t *testing.T) {
	for name, mk := range map[string]func() Input{
		"vllm": vllmDeployment, "rollup": rollup, "unresolved": unresolvedJob, "large": large,
	} {
		t.Run(name, func(t *testing.T) {
			want, err := Build(mk())
			require.NoError(t, err)
			again, err := Build(mk())
			require.NoError(t, err)
			require.Equal(t, want.JSON, again.JSON)

			rng := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				in := mk()
				f := &in.Findings
				rng.Shuffle(len(in.Owned), func(i, j int) { in.Owned[i], in.Owned[j] = in.Owned[j], in.Owned[i] })
				rng.Shuffle(len(f.Runtimes), func(i, j int) { f.Runtimes[i], f.Runtimes[j] = f.Runtimes[j], f.Runtimes[i] })
				rng.Shuffle(len(f.Models), func(i, j int) { f.Models[i], f.Models[j] = f.Models[j], f.Models[i] })
				rng.Shuffle(len(f.Data), func(i, j int) { f.Data[i], f.Data[j] = f.Data[j], f.Data[i] })
				rng.Shuffle(len(f.Redactions), func(i, j int) { f.Redactions[i], f.Redactions[j] = f.Redactions[j], f.Redactions[i] })
				// Containers move together with their digests.
				if len(in.Digests) == len(f.Containers) {
					rng.Shuffle(len(f.Containers), func(i, j int) {
						f.Containers[i], f.Containers[j] = f.Containers[j], f.Containers[i]
						in.Digests[i], in.Digests[j] = in.Digests[j], in.Digests[i]
					})
				}
				got, err := Build(in)
				require.NoError(t, err)
				require.Equal(t, string(want.JSON), string(got.JSON))
				require.Equal(t, want.SHA256, got.SHA256)
			}
		})
	}
}

func TestSerialNumberFollowsContent(t *testing.T) {
	a, da := build(t, vllmDeployment())
	in := vllmDeployment()
	in.Findings.Models[0].Name = "meta-llama/Llama-3.1-70B-Instruct"
	b, db := build(t, in)
	assert.NotEqual(t, da.SerialNumber, db.SerialNumber)
	assert.NotEqual(t, a.SHA256, b.SHA256)

	// The serial number is derived from the rest of the document.
	unsigned := strings.Replace(string(a.JSON), `"serialNumber":"`+da.SerialNumber+`",`, "", 1)
	assert.Equal(t, strings.TrimPrefix(da.SerialNumber, "urn:uuid:"), uuid.NewSHA1(serialNamespace, []byte(unsigned)).String())
	// A version-5 (name-based, SHA-1) UUID in the RFC 4122 variant.
	u, err := uuid.Parse(strings.TrimPrefix(da.SerialNumber, "urn:uuid:"))
	require.NoError(t, err)
	assert.Equal(t, uuid.Version(5), u.Version())
	assert.Equal(t, uuid.RFC4122, u.Variant())
}

// The namespace of serial numbers never changes: every serial number
// would.
func TestSerialNamespace(t *testing.T) {
	// uuid5(NAMESPACE_URL, "https://github.com/aibom-dev/aibom#serialNumber"),
	// as computed by the hand-written implementation this replaced.
	assert.Equal(t, "4ccb2dc5-5d15-5a97-a7a7-37f7799e829f", serialNamespace.String())
}

func TestUnicode(t *testing.T) {
	in := vllmDeployment()
	in.Subject.Name = "서버-ü"
	in.Findings.Models = append(in.Findings.Models, adapter.Model{Name: "組織/模型-Ωmega", Version: "β-1", Confidence: adapter.Declared, Evidence: ev(adapter.SourceWorkloadAnnotation, "metadata.annotations[aibom.dev/模型]")})
	in.Findings.Properties = append(in.Findings.Properties, adapter.Property{Name: "app.ключ", Value: "значение <&>"})
	res, d := build(t, in)
	assert.Contains(t, string(res.JSON), `"組織/模型-Ωmega"`)
	assert.Contains(t, string(res.JSON), `"значение <&>"`)
	assert.Equal(t, "서버-ü", d.Metadata.Component.Name)
	assert.Contains(t, res.Summary.Models, "組織/模型-Ωmega")
	again, err := Build(in)
	require.NoError(t, err)
	assert.Equal(t, res.JSON, again.JSON)
}

func TestRedactionsRecorded(t *testing.T) {
	in := unresolvedJob()
	res, d := build(t, in)
	v, ok := prop(d.Metadata.Properties, "aibom.redaction.0")
	require.True(t, ok)
	assert.Equal(t, "secret-name:spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name(NGC_API_KEY)", v)
	// Only the locator and reason are recorded; the document holds no value
	// beyond what the findings carried.
	assert.NotContains(t, string(res.JSON), "nvapi-")
}

func TestTruncation(t *testing.T) {
	in := large()
	full, err := Build(in)
	require.NoError(t, err)
	require.Zero(t, full.Truncated)
	total := len(decode(t, full.JSON).Components)

	// Exactly at the size: nothing dropped.
	in.MaxBytes = len(full.JSON)
	res, err := Build(in)
	require.NoError(t, err)
	assert.Zero(t, res.Truncated)
	assert.Equal(t, full.JSON, res.JSON)

	prevDropped := 0
	for _, frac := range []int{95, 80, 60, 40, 25} {
		in.MaxBytes = len(full.JSON) * frac / 100
		res, d := build(t, in)
		assert.LessOrEqual(t, len(res.JSON), in.MaxBytes)
		assert.Positive(t, res.Truncated)
		assert.GreaterOrEqual(t, res.Truncated, prevDropped)
		prevDropped = res.Truncated
		assert.Equal(t, total-res.Truncated, len(d.Components))
		v, ok := prop(d.Metadata.Properties, "aibom.truncation.applied")
		require.True(t, ok)
		assert.Equal(t, "components-dropped:"+itoa(res.Truncated), v)
		assert.Equal(t, "aibom.truncation.applied", d.Metadata.Properties[len(d.Metadata.Properties)-1].Name)
		assert.Equal(t, full.Summary, res.Summary, "the summary describes the facts")

		// One component fewer dropped would not fit: the fewest drops.
		assert.Greater(t, len(full.JSON), in.MaxBytes)

		// Lower tiers go first: a kept component's tier is never below a
		// dropped one's.
		kept := map[string]bool{}
		for _, c := range d.Components {
			kept[c.BOMRef] = true
		}
		fd := decode(t, full.JSON)
		minKept, maxDropped := 99, -1
		for _, c := range fd.Components {
			tr := tierOf(c)
			if kept[c.BOMRef] {
				minKept = min(minKept, tr)
			} else {
				maxDropped = max(maxDropped, tr)
			}
		}
		assert.LessOrEqual(t, maxDropped, minKept, "at %d%%", frac)
	}

	// The data tier is dropped from the end of its sorted order.
	in.MaxBytes = len(full.JSON) - 1
	res, err = Build(in)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Truncated)
	d := decode(t, res.JSON)
	var data []string
	for _, c := range d.Components {
		if c.Type == "data" {
			data = append(data, c.Name)
		}
	}
	// "model-cache" sorts last among the data components.
	assert.Equal(t, []string{"cache-a", "cache-b", "cache-c", "cache-d", "cache-e", "cache-f"}, data)
}

func tierOf(c component) int {
	switch c.Type {
	case "data":
		return 0
	case "container":
		if _, ok := prop(c.Properties, "aibom.container.init"); ok {
			return 1
		}
		return 2
	case "machine-learning-model":
		return 3
	default:
		return 4
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestTruncationOrderAcrossTiers(t *testing.T) {
	in := vllmDeployment()
	full, err := Build(in)
	require.NoError(t, err)
	var order []string
	fd := decode(t, full.JSON)
	for limit := len(full.JSON) - 1; ; limit -= 200 {
		in.MaxBytes = limit
		res, err := Build(in)
		if errors.Is(err, ErrTooLarge) {
			break
		}
		require.NoError(t, err)
		d := decode(t, res.JSON)
		kept := map[string]bool{}
		for _, c := range d.Components {
			kept[c.BOMRef] = true
		}
		for _, c := range fd.Components {
			name := c.Type + " " + c.Name + " " + c.Version
			if !kept[c.BOMRef] && !slices.Contains(order, name) {
				order = append(order, name)
			}
		}
	}
	assert.Equal(t, []string{
		"data model-cache ",
		"container docker.io/library/busybox 1.36",
		"container docker.io/vllm/vllm-openai v0.6.3",
		"machine-learning-model meta-llama/Llama-3.1-8B-Instruct ",
		"application vllm v0.6.3",
	}, order)
}

func TestTooLarge(t *testing.T) {
	in := vllmDeployment()
	in.MaxBytes = 200
	res, err := Build(in)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Equal(t, 5, res.Truncated)
	require.NoError(t, ValidateSchema(res.JSON))
	assert.Empty(t, decode(t, res.JSON).Components)

	// No components at all.
	res, err = Build(Input{Subject: Subject{Kind: "Pod", Name: "p"}, MaxBytes: 10})
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Zero(t, res.Truncated)
}

func TestBuildErrors(t *testing.T) {
	for name, mut := range map[string]func(*Input){
		"no subject name":   func(in *Input) { in.Subject.Name = "" },
		"no subject kind":   func(in *Input) { in.Subject.Kind = "" },
		"too many digests":  func(in *Input) { in.Digests = append(in.Digests, ContainerDigest{}) },
		"malformed digest":  func(in *Input) { in.Digests[0].Digest = "sha256:abc" },
		"upper-case digest": func(in *Input) { in.Digests[0].Digest = strings.ToUpper(digestA) },
		"no confidence":     func(in *Input) { in.Digests[0].Confidence = "" },
		"unresolved digest": func(in *Input) { in.Digests[0].Confidence = adapter.Unresolved },
		"negative max":      func(in *Input) { in.MaxBytes = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			in := vllmDeployment()
			mut(&in)
			_, err := Build(in)
			assert.Error(t, err)
		})
	}
}

func TestValidateSchemaRejects(t *testing.T) {
	res, err := Build(vllmDeployment())
	require.NoError(t, err)
	for name, mut := range map[string]func(string) string{
		"bad serial":    func(s string) string { return strings.Replace(s, `"urn:uuid:`, `"urn:uuid:x`, 1) },
		"bad type":      func(s string) string { return strings.Replace(s, `"type":"data"`, `"type":"dataset"`, 1) },
		"unknown field": func(s string) string { return strings.Replace(s, `"version":1,`, `"version":1,"extra":true,`, 1) },
		"bad hash":      func(s string) string { return strings.Replace(s, `"content":"a3`, `"content":"zz`, 1) },
		"not json":      func(s string) string { return s[:len(s)/2] },
		"bad specVersion": func(s string) string {
			return strings.Replace(s, `"specVersion":"1.6"`, `"specVersion":1.6`, 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			bad := mut(string(res.JSON))
			require.NotEqual(t, string(res.JSON), bad)
			assert.Error(t, ValidateSchema([]byte(bad)))
		})
	}
}

// A placeholder image is flagged as an invalid reference and named as
// written, never normalised into docker.io/library/<...>.
func TestInvalidImageReference(t *testing.T) {
	in := vllmDeployment()
	in.Digests = nil
	in.Findings.Containers[0].Image = "<image>"
	_, d := build(t, in)
	var found bool
	for _, c := range d.Components {
		assert.NotContains(t, c.Name, "library/<image>")
		if c.Type != "container" || c.Name != "<image>" {
			continue
		}
		found = true
		v, _ := prop(c.Properties, "aibom.image.invalid")
		assert.Equal(t, "true", v)
		assert.Empty(t, c.PURL)
	}
	assert.True(t, found, "the container is named as written")
	for _, ok := range []string{"nginx", "vllm/vllm-openai:v0.6.3", "nvcr.io/nim/meta/x@sha256:" + strings.Repeat("a", 64)} {
		assert.True(t, ValidReference(ok), ok)
	}
	for _, bad := range []string{"<image>", "V_IMAGE_URL", "a b", "{{ .Values.image }}"} {
		assert.False(t, ValidReference(bad), bad)
	}
}

// The graph: every document has dependencies whose refs resolve, the
// workload depends on its containers, a container on what it runs, a runtime
// on its model; images and Hugging Face models have purls.
func TestDependencyGraph(t *testing.T) {
	for name, in := range map[string]Input{"vllm": vllmDeployment(), "rollup": rollup(), "large": large()} {
		t.Run(name, func(t *testing.T) {
			res, err := Build(in)
			require.NoError(t, err)
			var bom struct {
				Metadata struct {
					Component struct {
						BOMRef string `json:"bom-ref"`
					} `json:"component"`
				} `json:"metadata"`
				Components []struct {
					BOMRef string `json:"bom-ref"`
					Type   string `json:"type"`
					Name   string `json:"name"`
					PURL   string `json:"purl"`
				} `json:"components"`
				Dependencies []struct {
					Ref       string   `json:"ref"`
					DependsOn []string `json:"dependsOn"`
				} `json:"dependencies"`
			}
			require.NoError(t, json.Unmarshal(res.JSON, &bom))
			require.NotEmpty(t, bom.Dependencies)
			on := map[string][]string{}
			typ := map[string]string{}
			for _, c := range bom.Components {
				typ[c.BOMRef] = c.Type
				if c.Type == "container" {
					assert.NotEmpty(t, c.PURL, "every image has a purl: %s", c.Name)
				}
				if c.Type == "machine-learning-model" && strings.Count(c.Name, "/") == 1 {
					assert.True(t, strings.HasPrefix(c.PURL, "pkg:huggingface/"), c.Name)
				}
			}
			for _, d := range bom.Dependencies {
				on[d.Ref] = d.DependsOn
			}
			// workload -> containers -> runtime -> model
			var runtimes int
			for _, c := range on[bom.Metadata.Component.BOMRef] {
				if typ[c] != "container" {
					continue
				}
				for _, r := range on[c] {
					if typ[r] == "application" || typ[r] == "platform" {
						runtimes++
						models := 0
						for _, m := range on[r] {
							if typ[m] == "machine-learning-model" || typ[m] == "application" {
								models++
							}
						}
						assert.NotZero(t, models, "the runtime %s serves a model", r)
					}
				}
			}
			assert.NotZero(t, runtimes, "a container runs a runtime")
		})
	}
	// A dangling ref is refused.
	res, err := Build(vllmDeployment())
	require.NoError(t, err)
	bad := strings.Replace(string(res.JSON), `"dependsOn":["aibom:container:`, `"dependsOn":["aibom:container:ffff`, 1)
	require.NotEqual(t, string(res.JSON), bad)
	require.ErrorContains(t, ValidateSchema([]byte(bad)), "names no component")
}

// The model card says what the evidence declares (task, architecture), and
// the quantisation is a property with where it came from; with nothing
// known there is no model card. The document stays schema-valid.
func TestModelCardAndQuantization(t *testing.T) {
	in := vllmDeployment()
	in.Findings.Models = []adapter.Model{
		{Name: "Qwen/Qwen3-8B", Task: "embed", Architecture: "Qwen3ForCausalLM", Quantization: "awq", Confidence: adapter.Declared,
			Evidence: ev(adapter.SourceContainerArg, "spec.template.spec.containers[0].args[1](--model)")},
		{Name: "Qwen/Qwen2.5-7B-Instruct-GPTQ", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "spec.template.spec.containers[0].args[3](--model)")},
		{Name: "meta-llama/Llama-3.1-8B-Instruct", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "spec.template.spec.containers[0].args[5](--model)")},
	}
	res, _ := build(t, in)
	var bom struct {
		Components []struct {
			Name      string `json:"name"`
			ModelCard *struct {
				ModelParameters struct {
					Task              string `json:"task"`
					ModelArchitecture string `json:"modelArchitecture"`
				} `json:"modelParameters"`
			} `json:"modelCard"`
			Properties []property `json:"properties"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(res.JSON, &bom))
	got := map[string]string{}
	for _, c := range bom.Components {
		props := map[string]string{}
		for _, p := range c.Properties {
			props[p.Name] = p.Value
		}
		card := "-"
		if c.ModelCard != nil {
			card = c.ModelCard.ModelParameters.Task + "/" + c.ModelCard.ModelParameters.ModelArchitecture
		}
		got[c.Name] = card + " " + props["aibom.model.quantization"] + "(" + props["aibom.model.quantization.source"] + ")"
	}
	require.Equal(t, "embed/Qwen3ForCausalLM awq(declared)", got["Qwen/Qwen3-8B"])
	require.Equal(t, "- gptq(model-name)", got["Qwen/Qwen2.5-7B-Instruct-GPTQ"])
	require.Equal(t, "- ()", got["meta-llama/Llama-3.1-8B-Instruct"], "nothing known: no model card, no quantisation")
}

// A model named without a version and with its one known version (a flag
// and a CRD revision) is one component with both claims as evidence; with
// two versions known, the unversioned claim stays apart.
func TestUnversionedClaimJoinsTheOneKnownVersion(t *testing.T) {
	count := func(models ...adapter.Model) map[string]int {
		in := vllmDeployment()
		in.Findings.Models = models
		_, d := build(t, in)
		out := map[string]int{}
		for _, c := range d.Components {
			if c.Type == "machine-learning-model" {
				out[c.Name+":"+c.Version]++
			}
		}
		return out
	}
	flag := adapter.Model{Name: "Qwen/Qwen3-0.6B", Confidence: adapter.Declared, Evidence: ev(adapter.SourceContainerArg, "a(--model)")}
	rev := adapter.Model{Name: "Qwen/Qwen3-0.6B", Version: "c1899de289a04d12100db370d81485cdf75e47ca", Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.model.revision")}
	require.Equal(t, map[string]int{"Qwen/Qwen3-0.6B:c1899de289a04d12100db370d81485cdf75e47ca": 1}, count(flag, rev))
	other := rev
	other.Version = "main"
	require.Equal(t, map[string]int{"Qwen/Qwen3-0.6B:": 1, "Qwen/Qwen3-0.6B:c1899de289a04d12100db370d81485cdf75e47ca": 1, "Qwen/Qwen3-0.6B:main": 1},
		count(flag, rev, other))
}

// A LoRA adapter depends on the base model it declares when the document
// holds that model, and says which it is.
func TestLoRAAdapterDependsOnItsBaseModel(t *testing.T) {
	in := vllmDeployment()
	in.Findings.Models = append(in.Findings.Models, adapter.Model{Name: "org/lora", BaseModel: "meta-llama/Llama-3.1-8B-Instruct",
		Confidence: adapter.Declared, Evidence: ev(adapter.SourceCRDField, "spec.adapters[0].url")})
	res, d := build(t, in)
	refs := map[string]string{}
	for _, c := range d.Components {
		refs[c.Name] = c.BOMRef
	}
	var bom struct {
		Dependencies []struct {
			Ref       string   `json:"ref"`
			DependsOn []string `json:"dependsOn"`
		} `json:"dependencies"`
	}
	require.NoError(t, json.Unmarshal(res.JSON, &bom))
	found := false
	for _, dep := range bom.Dependencies {
		if dep.Ref == refs["org/lora"] {
			found = slices.Contains(dep.DependsOn, refs["meta-llama/Llama-3.1-8B-Instruct"])
		}
	}
	require.True(t, found, "the adapter must depend on its base model")
}
