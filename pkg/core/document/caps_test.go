package document

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// During a rollout the component's hash and purl stay the digest most pods
// run, with its pod count; every other running digest is listed with its
// own. The hash is never repeated as a property.
func TestRunningDigestsListedWithCounts(t *testing.T) {
	in := vllmDeployment()
	in.Digests[0].Confidence = adapter.Inferred
	in.Digests[0].Running = []RunningDigest{{Digest: digestA, Pods: 3}, {Digest: digestB, Pods: 1}}
	res, d := build(t, in)
	c := containerNamed(t, d, "vllm")
	assert.Equal(t, []hash{{"SHA-256", strings.TrimPrefix(digestA, "sha256:")}}, c.Hashes)
	var running []string
	for _, p := range c.Properties {
		if strings.HasPrefix(p.Name, "aibom.digest.pods") || strings.HasPrefix(p.Name, "aibom.digest.other.") {
			running = append(running, p.Name+"="+p.Value)
		}
	}
	assert.Equal(t, []string{
		"aibom.digest.pods=3",
		"aibom.digest.other.0=" + digestB, "aibom.digest.other.0.pods=1",
	}, running)
	assert.NotContains(t, string(res.JSON), `"value":"`+digestA+`"`, "the hash is not repeated as a property")

	again, err := Build(in)
	require.NoError(t, err)
	assert.Equal(t, res.JSON, again.JSON, "byte-deterministic")
}

// A hash no pod runs (a pin the pods do not follow) has no pod count; every
// running digest is another.
func TestRunningDigestsBesideAHashNoPodRuns(t *testing.T) {
	in := vllmDeployment()
	in.Digests[0].Running = []RunningDigest{{Digest: digestB, Pods: 2}}
	_, d := build(t, in)
	c := containerNamed(t, d, "vllm")
	_, ok := prop(c.Properties, "aibom.digest.pods")
	assert.False(t, ok)
	v, _ := prop(c.Properties, "aibom.digest.other.0")
	assert.Equal(t, digestB, v)
}

func TestRunningDigestsCapped(t *testing.T) {
	in := vllmDeployment()
	in.Digests[0].Running = nil
	for i := range MaxRunningListed + 5 {
		in.Digests[0].Running = append(in.Digests[0].Running, RunningDigest{Digest: fmt.Sprintf("sha256:%064x", i+1), Pods: 1})
	}
	_, d := build(t, in)
	c := containerNamed(t, d, "vllm")
	v, ok := prop(c.Properties, "aibom.digest.other.omitted")
	require.True(t, ok)
	assert.Equal(t, "5", v)
	_, ok = prop(c.Properties, "aibom.digest.other."+strconv.Itoa(MaxRunningListed))
	assert.False(t, ok)
}

func TestMalformedRunningDigestRefused(t *testing.T) {
	for _, r := range []RunningDigest{{Digest: "sha256:abc", Pods: 1}, {Digest: digestB, Pods: 0}} {
		in := vllmDeployment()
		in.Digests[0].Running = []RunningDigest{r}
		_, err := Build(in)
		require.ErrorContains(t, err, "running digest")
	}
}

// A root that absorbed 10,000 workloads lists the first MaxOwnedListed, says
// how many there are and how many are left out, and fits the inline cap.
func TestOwnedListCappedWithExactCount(t *testing.T) {
	in := rollup()
	in.Owned = nil
	for i := range 10000 {
		in.Owned = append(in.Owned, fmt.Sprintf("Deployment/a-rather-long-deployment-name-for-component-%05d", i))
	}
	in.MaxBytes = 512 << 10
	res, d := build(t, in)
	assert.Zero(t, res.Truncated, "no component is dropped for the owned list")
	assert.LessOrEqual(t, len(res.JSON), in.MaxBytes)
	var listed int
	for _, p := range d.Metadata.Properties {
		if strings.HasPrefix(p.Name, "aibom.rollup.owned.") {
			listed++
		}
	}
	assert.Equal(t, MaxOwnedListed, listed)
	v, _ := prop(d.Metadata.Properties, "aibom.rollup.ownedCount")
	assert.Equal(t, "10000", v)
	v, _ = prop(d.Metadata.Properties, "aibom.rollup.ownedOmitted")
	assert.Equal(t, "9000", v)
	v, _ = prop(d.Metadata.Properties, "aibom.rollup.owned.0")
	assert.Equal(t, "Deployment/a-rather-long-deployment-name-for-component-00000", v)

	// Up to the cap, nothing changes: no count, no omission.
	in.Owned = in.Owned[:MaxOwnedListed]
	_, d = build(t, in)
	_, ok := prop(d.Metadata.Properties, "aibom.rollup.ownedCount")
	assert.False(t, ok)
	_, ok = prop(d.Metadata.Properties, "aibom.rollup.ownedOmitted")
	assert.False(t, ok)
}

func containerNamed(t *testing.T, d doc, name string) component {
	t.Helper()
	for _, c := range d.Components {
		if v, _ := prop(c.Properties, "aibom.container.name"); c.Type == "container" && v == name {
			return c
		}
	}
	t.Fatalf("no container component %q", name)
	return component{}
}
