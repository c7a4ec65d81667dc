package document

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// The timestamp is the newest creation among the inputs, in UTC, so that
// the same inputs give the same bytes whenever they are built.
func TestTimestampIsTheInputsNewestCreation(t *testing.T) {
	in := vllmDeployment()
	in.Created = time.Date(2026, 11, 29, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	res, d := build(t, in)
	assert.Equal(t, "2026-11-29T09:00:00Z", d.Metadata.Timestamp)
	again, err := Build(in)
	require.NoError(t, err)
	assert.Equal(t, res.JSON, again.JSON)

	in.Created = time.Time{}
	_, d = build(t, in)
	assert.Empty(t, d.Metadata.Timestamp, "no creation known: no timestamp, never the clock")
}

// A model whose sources are all NGC registry paths gets an NGC purl; the
// rule never guesses one for a name alone.
func TestNGCModelPURL(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		sources       []string
		want          string
	}{
		{"nvidia/nemo/llama-3_2-1b-instruct", "", []string{"ngc://nvidia/nemo/llama-3_2-1b-instruct"}, "pkg:generic/ngc/nvidia/nemo/llama-3_2-1b-instruct"},
		{"nvidia/llama-3_1-8b", "1.0", []string{"ngc://nvidia/llama-3_1-8b:1.0"}, "pkg:generic/ngc/nvidia/llama-3_1-8b@1.0"},
		{"nvidia/nemo/llama-3_2-1b-instruct", "", nil, ""},
		{"nvidia/nemo/llama-3_2-1b-instruct", "", []string{"ngc://x", "s3://bucket/x"}, ""},
		{"a/b/c/d", "", []string{"ngc://a/b/c/d"}, ""},
		{"a//c", "", []string{"ngc://a//c"}, ""},
	} {
		assert.Equal(t, tc.want, modelPURL(tc.name, tc.version, tc.sources, false), "%s %v", tc.name, tc.sources)
	}
}

// longSubject is a workload at every Kubernetes name limit: a 253-byte
// name, a 63-byte namespace and kind, a 253-byte group.
func longSubject() Subject {
	group := strings.Repeat("g", 63) + "." + strings.Repeat("h", 63) + "." + strings.Repeat("i", 63) + "." + strings.Repeat("j", 61)
	return Subject{
		APIVersion: group + "/" + strings.Repeat("v", 63), Group: group, Kind: strings.Repeat("K", 63),
		Namespace: strings.Repeat("n", 63), Name: strings.Repeat("w", 253), UID: "0d6c7a1e-58f2-4f0b-9a51-2b7e0c3d4e5f",
		Generic: true, Unread: true,
	}
}

// At the smallest cap the controller accepts, any workload's document fits:
// past dropping every component, the skeleton keeps the workload, the
// aggregate confidence, the roll-up's count and the match, and counts what
// it left out.
func TestBareSkeletonFitsTheMinimumCap(t *testing.T) {
	in := rollup()
	in.Subject = longSubject()
	in.Owned = nil
	for i := range MaxOwnedListed + 50 {
		in.Owned = append(in.Owned, fmt.Sprintf("DynamoComponentDeployment.nvidia.com/%s-%04d", strings.Repeat("c", 240), i))
	}
	for i := range 200 {
		in.Findings.Redactions = append(in.Findings.Redactions, adapter.Redaction{Locator: fmt.Sprintf("spec.env[%d].value", i), Reason: "token"})
		in.Findings.Properties = append(in.Findings.Properties, adapter.Property{Name: fmt.Sprintf("dynamo.x.%d", i), Value: strings.Repeat("v", 200)})
	}
	in.Findings.Runtimes[0].Name = strings.Repeat("r", 4096)
	in.MaxBytes = MinMaxBytes
	res, d := build(t, in)
	t.Logf("the bare skeleton at every name limit: %d bytes", len(res.JSON))
	assert.LessOrEqual(t, len(res.JSON), MinMaxBytes)
	assert.Empty(t, d.Components)
	assert.Equal(t, in.Subject.Name, d.Metadata.Component.Name)
	names := map[string]string{}
	for _, p := range d.Metadata.Properties {
		names[p.Name] = p.Value
	}
	assert.Equal(t, "1050", names["aibom.rollup.ownedCount"])
	assert.Equal(t, "1050", names["aibom.rollup.ownedOmitted"])
	assert.Contains(t, names, "aibom.confidence")
	assert.Contains(t, names, "aibom.match")
	assert.Regexp(t, `^components-dropped:[0-9]+,properties-dropped:[0-9]+$`, names["aibom.truncation.applied"])
	assert.NotContains(t, names, "aibom.redaction.0")
	assert.Equal(t, fullSummary(t, in), res.Summary, "the summary still describes every fact")

	// A Dynamo graph with a long roll-up at the minimum cap: built bare,
	// never refused (at the former minimum of 1024 bytes even its bare
	// skeleton did not fit).
	in = rollup()
	for i := range 300 {
		in.Owned = append(in.Owned, fmt.Sprintf("DynamoComponentDeployment.nvidia.com/disagg-worker-%03d", i))
	}
	in.MaxBytes = MinMaxBytes
	res, d = build(t, in)
	assert.LessOrEqual(t, len(res.JSON), MinMaxBytes)
	assert.Empty(t, d.Components)
	v, _ := prop(d.Metadata.Properties, "aibom.rollup.ownedCount")
	assert.Equal(t, "302", v)
}

func fullSummary(t *testing.T, in Input) Summary {
	t.Helper()
	in.MaxBytes = 0
	res, err := Build(in)
	require.NoError(t, err)
	return res.Summary
}

// A container is aibom.image.pinned when every reference the spec writes
// for it names its digest; the written reference itself is not repeated
// (name, version and hash say it).
func TestImagePinned(t *testing.T) {
	pinned := "vllm/vllm-openai:v0.6.3@" + digestA
	in := vllmDeployment()
	in.Findings.Containers[0].Image = pinned
	_, d := build(t, in)
	c := containerNamed(t, d, "vllm")
	v, _ := prop(c.Properties, "aibom.image.pinned")
	assert.Equal(t, "true", v)
	assert.Equal(t, "docker.io/vllm/vllm-openai", c.Name)
	assert.Equal(t, "v0.6.3", c.Version)
	for _, p := range c.Properties {
		assert.NotEqual(t, pinned, p.Value, p.Name)
	}

	// The same image written once with its digest and once by tag only.
	in.Findings.Containers = append(in.Findings.Containers, adapter.Container{Name: "sidecar", Image: "vllm/vllm-openai:v0.6.3",
		Evidence: ev(adapter.SourceImageReference, "spec.template.spec.containers[1].image")})
	in.Digests = append(in.Digests, ContainerDigest{Digest: digestA, Confidence: adapter.Declared, Evidence: ev(adapter.SourcePodStatus, "pods/p.status.containerStatuses[name=sidecar].imageID")})
	_, d = build(t, in)
	c = containerNamed(t, d, "vllm")
	_, ok := prop(c.Properties, "aibom.image.pinned")
	assert.False(t, ok, "one reference by tag only")

	_, d = build(t, vllmDeployment())
	_, ok = prop(containerNamed(t, d, "vllm").Properties, "aibom.image.pinned")
	assert.False(t, ok)
}
