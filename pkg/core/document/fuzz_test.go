package document

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// FuzzBuild builds documents from arbitrary findings, strings and size caps.
// The fuzzer's bytes choose how many containers, runtimes, models, data,
// properties, redactions, digests and owned workloads there are and which
// strings they carry: the strings come from the fuzzer's text (split at
// '|') and from a few fixed shapes (images, digests, unicode, invalid
// UTF-8, JSON and HTML metacharacters). For every input:
//
//   - Build never panics; it fails only on what its contract names (no
//     subject kind or name, a malformed digest or a digest without
//     confidence, a document over the cap with every component dropped);
//
//   - the output is valid JSON, its SHA256 is right, and building the same
//     input again, or the same findings in reverse order, gives the same
//     bytes;
//
//   - with a cap, a document that Build accepts fits it, a truncated one
//     says so in aibom.truncation.applied, and one it refuses is the
//     smallest it can make (no components left);
//
//   - the document validates against the CycloneDX 1.6 schema (checked for
//     one input in eight, those whose length is a multiple of 8, which
//     every seed is: validation is slow).
//
//     go test ./pkg/core/document -run '^$' -fuzz '^FuzzBuild$' -fuzztime 30s
func FuzzBuild(f *testing.F) {
	f.Add([]byte{}, "", uint32(0))
	f.Add([]byte{3, 2, 1, 1, 1, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24},
		"Deployment|llama|vllm/vllm-openai:v0.6.3|meta-llama/Llama-3.1-8B-Instruct|/models|main", uint32(0))
	f.Add(bytes.Repeat([]byte{7, 1, 3, 2, 5, 4}, 40), "Widget|w|nginx@sha256:"+strings.Repeat("ab", 32)+"|x", uint32(6000))
	f.Add(bytes.Repeat([]byte{255, 128, 64, 32, 16, 8, 4, 2, 1, 0}, 32), "K|n|\xff\xfe|<script>&amp;|\"quoted\"\n|модель/ラマ", uint32(1))
	f.Add(bytes.Repeat([]byte{9}, 200), "Kind|name", uint32(2500))
	f.Fuzz(func(t *testing.T, data []byte, text string, maxBytes uint32) {
		in := decodeInput(data, text, int(maxBytes%200000))
		checkBuild(t, in, len(data)%8 == 0)
	})
}

// fuzzStrings are string shapes the fuzzer's text may not find quickly.
var fuzzStrings = []string{
	"", "Deployment", "apps", "apps/v1", "main", "nginx", "vllm/vllm-openai:v0.6.3",
	"nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", "registry.example:5000/team/img@sha256:" + strings.Repeat("0f", 32),
	"sha256:" + strings.Repeat("a1", 32), "meta-llama/Llama-3.1-8B-Instruct", "spec.template.spec.containers[0].image",
	"\xff\xfe\xfd", "模型/名前", "<&>\"'\\\u2028", strings.Repeat("x", 300), "a b\tc\nd", "REDACTED",
}

func decodeInput(data []byte, text string, maxBytes int) Input {
	pool := append(slices.Clone(fuzzStrings), strings.Split(text, "|")...)
	i := 0
	next := func() int {
		if i >= len(data) {
			return 0
		}
		b := int(data[i])
		i++
		return b
	}
	str := func() string { return pool[next()%len(pool)] }
	conf := func() adapter.Confidence {
		return []adapter.Confidence{adapter.Declared, adapter.Inferred, adapter.Unresolved, "", "bogus"}[next()%5]
	}
	ev := func() adapter.Evidence { return adapter.Evidence{Source: adapter.Source(str()), Locator: str()} }

	in := Input{
		Subject:  Subject{APIVersion: str(), Group: str(), Kind: str(), Namespace: str(), Name: str(), UID: str()},
		Tool:     Tool{Name: str(), Version: str()},
		MaxBytes: maxBytes,
	}
	f := &in.Findings
	var images []ContainerImage
	anyImage := false
	for n := next() % 64; n > 0; n-- {
		c := adapter.Container{Name: str(), Image: str(), Init: next()%3 == 0, Group: str(), Evidence: ev()}
		var img ContainerImage
		if next()%4 == 0 { // the operator chooses the image (often with an image, refused)
			c.ImageFromPods = true
			if next()%3 != 0 {
				c.Image = ""
			}
			if next()%2 == 0 {
				img = ContainerImage{Image: str(), Confidence: conf(), Evidence: ev()}
			}
		}
		f.Containers = append(f.Containers, c)
		images = append(images, img)
		if img != (ContainerImage{}) {
			anyImage = true
		}
		switch next() % 8 {
		case 0, 1, 2: // unresolved
			in.Digests = append(in.Digests, ContainerDigest{})
		case 3, 4, 5, 6:
			d := sha256.Sum256([]byte(c.Image + c.Name))
			conf := []adapter.Confidence{adapter.Declared, adapter.Inferred}[next()%2]
			in.Digests = append(in.Digests, ContainerDigest{Digest: "sha256:" + hex.EncodeToString(d[:]), Confidence: conf, Evidence: ev()})
		case 7: // anything, often refused
			in.Digests = append(in.Digests, ContainerDigest{Digest: str(), Confidence: conf(), Evidence: ev()})
		}
	}
	if anyImage {
		in.Images = images
	}
	for n := next() % 16; n > 0; n-- {
		f.Runtimes = append(f.Runtimes, adapter.Runtime{Name: str(), Version: str(), Confidence: conf(), Evidence: ev()})
	}
	for n := next() % 16; n > 0; n-- {
		f.Models = append(f.Models, adapter.Model{Name: str(), Version: str(), Confidence: conf(), Evidence: ev()})
	}
	for n := next() % 16; n > 0; n-- {
		f.Data = append(f.Data, adapter.Data{Name: str(), Kind: str(), Confidence: conf(), Evidence: ev()})
	}
	for n := next() % 8; n > 0; n-- {
		f.Properties = append(f.Properties, adapter.Property{Name: str(), Value: str()})
	}
	for n := next() % 8; n > 0; n-- {
		f.Redactions = append(f.Redactions, adapter.Redaction{Locator: str(), Reason: str()})
	}
	for n := next() % 4; n > 0; n-- {
		f.Scrapers = append(f.Scrapers, adapter.Scraper{Name: str(), Version: str(), Method: str()})
	}
	for n := next() % 8; n > 0; n-- {
		in.Owned = append(in.Owned, str()+"/"+str())
	}
	return in
}

func checkBuild(t *testing.T, in Input, validate bool) {
	t.Helper()
	res, err := Build(in)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			require.Positive(t, in.MaxBytes)
			require.Greater(t, len(res.JSON), in.MaxBytes)
			require.True(t, json.Valid(res.JSON))
			var doc struct {
				Components []json.RawMessage `json:"components"`
			}
			require.NoError(t, json.Unmarshal(res.JSON, &doc))
			require.Empty(t, doc.Components, "refused only with every component dropped")
			return
		}
		require.True(t, expectedBuildError(in), "unexpected error %v", err)
		return
	}
	require.False(t, expectedBuildError(in), "Build accepted an input it must refuse")
	require.True(t, json.Valid(res.JSON), "not JSON: %s", res.JSON)
	sum := sha256.Sum256(res.JSON)
	require.Equal(t, hex.EncodeToString(sum[:]), res.SHA256)
	if in.MaxBytes > 0 {
		require.LessOrEqual(t, len(res.JSON), in.MaxBytes, "the document exceeds MaxBytes")
	} else {
		require.Zero(t, res.Truncated)
	}
	require.Equal(t, res.Truncated > 0 || res.PropertiesDropped > 0, bytes.Contains(res.JSON, []byte(`"aibom.truncation.applied"`)),
		"a truncation is recorded in the document, and only then")
	if res.PropertiesDropped > 0 {
		var top struct {
			Components []json.RawMessage `json:"components"`
		}
		require.NoError(t, json.Unmarshal(res.JSON, &top))
		require.Empty(t, top.Components, "a bare document drops every component first")
	}

	again, err := Build(in)
	require.NoError(t, err)
	require.Equal(t, string(res.JSON), string(again.JSON), "the same input gives the same bytes")

	rev := reversed(in)
	other, err := Build(rev)
	require.NoError(t, err)
	require.Equal(t, string(res.JSON), string(other.JSON), "the order of the findings does not matter")

	if validate {
		require.NoError(t, ValidateSchema(res.JSON))
	}
}

// expectedBuildError reports whether Build must refuse in for a reason its
// contract names (other than ErrTooLarge).
func expectedBuildError(in Input) bool {
	if in.Subject.Kind == "" || in.Subject.Name == "" || len(in.Digests) > len(in.Findings.Containers) {
		return true
	}
	for i, img := range in.Images {
		c := in.Findings.Containers[i]
		if img == (ContainerImage{}) {
			continue
		}
		if !c.ImageFromPods || strings.TrimSpace(c.Image) != "" ||
			(img.Image != "" && img.Confidence != adapter.Declared && img.Confidence != adapter.Inferred) {
			return true
		}
	}
	for i, d := range in.Digests {
		if d.Digest == "" {
			if _, _, pinned := ParseImage(in.Findings.Containers[i].Image); pinned == "" {
				continue
			}
			continue // a pinned image gives a declared digest
		}
		if !IsDigest(d.Digest) || (d.Confidence != adapter.Declared && d.Confidence != adapter.Inferred) {
			return true
		}
	}
	return false
}

// reversed returns in with its containers (and their digests), runtimes,
// models and data in reverse order.
func reversed(in Input) Input {
	out := in
	f := in.Findings
	digests := make([]ContainerDigest, len(f.Containers))
	copy(digests, in.Digests)
	out.Findings.Containers = slices.Clone(f.Containers)
	slices.Reverse(out.Findings.Containers)
	slices.Reverse(digests)
	out.Digests = digests
	if in.Images != nil {
		images := make([]ContainerImage, len(f.Containers))
		copy(images, in.Images)
		slices.Reverse(images)
		out.Images = images
	}
	out.Findings.Runtimes = slices.Clone(f.Runtimes)
	slices.Reverse(out.Findings.Runtimes)
	out.Findings.Models = slices.Clone(f.Models)
	slices.Reverse(out.Findings.Models)
	out.Findings.Data = slices.Clone(f.Data)
	slices.Reverse(out.Findings.Data)
	out.Owned = slices.Clone(in.Owned)
	slices.Reverse(out.Owned)
	return out
}
