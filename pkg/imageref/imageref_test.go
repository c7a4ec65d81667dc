package imageref

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	hexA = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	dA   = "sha256:" + hexA
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		ref, repo, tag, digest string
		valid                  bool
	}{
		{"nginx", "docker.io/library/nginx", "", "", true},
		{"nginx:1.25", "docker.io/library/nginx", "1.25", "", true},
		{"docker.io/nginx:1.25", "docker.io/library/nginx", "1.25", "", true},
		{"index.docker.io/nginx", "docker.io/library/nginx", "", "", true},
		{"registry-1.docker.io/nginx", "docker.io/library/nginx", "", "", true},
		{"Docker.IO/vllm/vllm-openai", "docker.io/vllm/vllm-openai", "", "", true},
		{"MyRegistry/app", "myregistry/app", "", "", true},
		{"nvidia/cuda:12.4.1-base", "docker.io/nvidia/cuda", "12.4.1-base", "", true},
		{"nvcr.io/nim/meta/llama:1.0@" + dA, "nvcr.io/nim/meta/llama", "1.0", dA, true},
		{"localhost/app", "localhost/app", "", "", true},
		{"localhost:5000/app:dev@" + dA, "localhost:5000/app", "dev", dA, true},
		{"[::1]:5000/app:1", "[::1]:5000/app", "1", "", true},
		{"  nginx:1.25\n", "docker.io/library/nginx", "1.25", "", true},
		// A digest the grammar accepts but that is no sha256 is no digest.
		{"nginx@sha512:" + hexA + hexA, "docker.io/library/nginx", "", "", true},
		// Not valid references: split leniently, flagged.
		{"nginx@sha256:abc", "docker.io/library/nginx", "", "", false},
		{"nginx@sha256:" + strings.ToUpper(hexA), "docker.io/library/nginx", "", "", false},
		{"<image>", "docker.io/library/<image>", "", "", false},
		{"V_IMAGE_URL", "docker.io/library/V_IMAGE_URL", "", "", false},
		{"ghcr.io/Org/App:1", "ghcr.io/Org/App", "1", "", false},
		{"/nginx/", "docker.io/library/nginx", "", "", false},
		{":tag", "", "tag", "", false},
		{"@" + dA, "", "", dA, false},
		{"", "", "", "", false},
		{"   ", "", "", "", false},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			r := Parse(tc.ref)
			assert.Equal(t, Reference{Repository: tc.repo, Tag: tc.tag, Digest: tc.digest, Valid: tc.valid}, r)
		})
	}
}

func TestIsDigest(t *testing.T) {
	assert.True(t, IsDigest(dA))
	for _, d := range []string{"", "sha256:", "sha256:abc", "sha256:" + strings.ToUpper(hexA), "sha512:" + hexA + hexA, hexA, dA + "\n", " " + dA} {
		assert.False(t, IsDigest(d), d)
	}
}

func TestParseImageID(t *testing.T) {
	for _, tc := range []struct {
		id, repo, digest string
		ok               bool
	}{
		{"docker.io/library/nginx@" + dA, "docker.io/library/nginx", dA, true},
		{"docker-pullable://nginx@" + dA, "docker.io/library/nginx", dA, true},
		{dA, "", dA, true},
		{"docker://" + dA, "", dA, true},
		{"nginx", "", "", false},
		{"nginx@sha256:abc", "", "", false},
		{"@" + dA, "", "", false},
	} {
		repo, d, ok := ParseImageID(tc.id)
		assert.Equal(t, tc.repo, repo, tc.id)
		assert.Equal(t, tc.digest, d, tc.id)
		assert.Equal(t, tc.ok, ok, tc.id)
	}
}

// Whatever the input: no panic, a digest only when well-formed, and a
// valid reference's repository is itself a valid reference that parses to
// the same repository (normalisation is stable), but for a host told by
// its upper case alone ("MyRegistry/app"): lower-cased, it reads as a
// Docker Hub namespace, as it did before this package.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"nginx", "vllm/vllm-openai:v0.6.3@" + dA, "Docker.IO/x", "<image>", "[::1]:5000/a", "a@b@c", "/x/", "registry-1.docker.io/nginx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Parse(s)
		if r.Digest != "" {
			require.True(t, IsDigest(r.Digest), "%q: digest %q", s, r.Digest)
		}
		if r.Valid {
			host, _, _ := strings.Cut(r.Repository, "/")
			if strings.ContainsAny(host, ".:") || host == "localhost" {
				// A host told by its upper case alone reads, lower-cased,
				// as a Docker Hub namespace: longer, it may pass the
				// grammar's length limit, so only the others are checked.
				again := Parse(r.Repository)
				require.True(t, again.Valid, "%q: repository %q", s, r.Repository)
				require.Equal(t, r.Repository, again.Repository, "%q", s)
			}
		}
		if _, d, ok := ParseImageID(s); ok {
			require.True(t, IsDigest(d))
		}
	})
}

// A remembered reference is what parsing it gives, on the first call and
// the next, and the memo stays bounded whatever a tenant writes.
func TestParseRemembersBoundedly(t *testing.T) {
	refs := []string{"nginx", " nginx ", "vllm/vllm-openai:v0.6.3@" + dA, "Docker.IO/x", "<image>", "[::1]:5000/a", "a@b@c", "/x/", "", "   ",
		"registry-1.docker.io/nginx", strings.Repeat("a", maxMemoRef+1)}
	for _, ref := range refs {
		want := parse(ref)
		require.Equal(t, want, Parse(ref), "%q first", ref)
		require.Equal(t, want, Parse(ref), "%q remembered", ref)
	}
	_, long := parsed.Load(strings.Repeat("a", maxMemoRef+1))
	require.False(t, long, "a reference over maxMemoRef bytes is not remembered")

	for i := range 3 * maxMemo {
		ref := fmt.Sprintf("registry.example.com/tenant/image-%d:v1", i)
		require.Equal(t, parse(ref), Parse(ref))
	}
	n := 0
	parsed.Range(func(any, any) bool { n++; return true })
	require.LessOrEqual(t, n, maxMemo)
	require.Positive(t, n)
}
