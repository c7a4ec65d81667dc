// Package imageref reads container image references as a pod spec writes
// them and as container runtimes resolve them: the one parser of the
// project, on the distribution reference grammar
// (github.com/distribution/reference), so that the document, the digest
// resolution and the runtime patterns of the adapters agree on what
// repository, tag and digest an image names.
package imageref

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
)

// DefaultRegistry is the registry a reference without a registry host
// refers to.
const DefaultRegistry = "docker.io"

// Reference is an image reference split into its parts.
type Reference struct {
	// Repository is normalised and always names its registry: "nginx",
	// "docker.io/library/nginx", "index.docker.io/library/nginx" and
	// "registry-1.docker.io/library/nginx" all give
	// "docker.io/library/nginx", while "nvcr.io/nvidia/x" and "nvidia/x"
	// ("docker.io/nvidia/x") stay distinct. The registry host is
	// lower-cased, the path kept as written.
	Repository string
	// Tag is the tag as written, "" when there is none (no "latest" is
	// assumed).
	Tag string
	// Digest is the pinned digest, only when it is a well-formed
	// "sha256:<64 lower-case hex>" (see IsDigest); "" otherwise.
	Digest string
	// Valid is set when the reference parses by the distribution grammar,
	// as container runtimes read it. "<image>" or "V_IMAGE_URL" (an
	// upper-case path) do not: they are split leniently, on the same
	// separators, so that a pattern can still recognise their pieces,
	// and a document names them as written.
	Valid bool
}

// Parse splits an image reference. An empty or blank reference gives the
// zero Reference.
//
// As in the container runtimes, the first path segment is a registry host
// when it contains a '.' or a ':', is "localhost", or has an upper-case
// letter.
func Parse(ref string) Reference {
	if len(ref) > maxMemoRef {
		return parse(ref)
	}
	if r, ok := parsed.Load(ref); ok {
		return r.(Reference)
	}
	r := parse(ref)
	if parsedCount.Add(1) > maxMemo {
		// Full (many distinct images, or a tenant making them up): start
		// over rather than grow.
		parsed.Clear()
		parsedCount.Store(1)
	}
	parsed.Store(ref, r)
	return r
}

// The same few images stand in most pod specs, and one reconcile parses each
// several times (the scrape, the document's components, its validity):
// Parse remembers up to maxMemo references of at most maxMemoRef bytes.
// A Reference holds strings only, so a remembered one is shared safely.
const (
	maxMemo    = 4096
	maxMemoRef = 512
)

var (
	parsed      sync.Map // reference -> Reference
	parsedCount atomic.Int64
)

// parse is Parse without the memo.
func parse(ref string) Reference {
	s := strings.TrimSpace(ref)
	if s == "" {
		return Reference{}
	}
	named, err := reference.ParseNormalizedNamed(s)
	if err != nil || reference.Domain(named) == "" {
		// Refused, or read with no registry at all (a first segment that
		// looks like a host but is none, "0_0.o/n"): split leniently.
		return lenient(s)
	}
	r := Reference{Repository: normalise(reference.Domain(named), reference.Path(named)), Valid: true}
	if t, ok := named.(reference.Tagged); ok {
		r.Tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok && IsDigest(d.Digest().String()) {
		r.Digest = d.Digest().String()
	}
	return r
}

// lenient splits a reference that is no valid one: the digest after the
// first '@' (kept only when well-formed), the tag after the last ':' of
// the last path segment, and the repository normalised as a valid one is.
func lenient(s string) Reference {
	var r Reference
	if at := strings.IndexByte(s, '@'); at >= 0 {
		if d := s[at+1:]; IsDigest(d) {
			r.Digest = d
		}
		s = s[:at]
	}
	slash := strings.LastIndexByte(s, '/')
	if colon := strings.LastIndexByte(s, ':'); colon > slash {
		r.Tag = s[colon+1:]
		s = s[:colon]
	}
	s = strings.Trim(s, "/")
	if s == "" {
		return r
	}
	host, path, found := strings.Cut(s, "/")
	if !found || !(strings.ContainsAny(host, ".:") || host == "localhost" || host != strings.ToLower(host)) {
		host, path = DefaultRegistry, s
	}
	r.Repository = normalise(host, path)
	return r
}

// normalise qualifies a repository path with its registry host: lower
// case, Docker Hub's aliases as "docker.io", and Docker Hub's official
// images under "library/".
func normalise(host, path string) string {
	host = strings.ToLower(host)
	if host == "index.docker.io" || host == "registry-1.docker.io" {
		host = DefaultRegistry
	}
	if host == DefaultRegistry && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	return host + "/" + path
}

// IsDigest reports whether d is a well-formed SHA-256 content digest,
// "sha256:" followed by 64 lower-case hex digits.
func IsDigest(d string) bool {
	parsed, err := digest.Parse(d)
	return err == nil && parsed.Algorithm() == digest.SHA256
}

// ParseImageID reads a container status imageID. It accepts
// "repo@sha256:<hex>", "docker-pullable://repo@sha256:<hex>", a bare
// "sha256:<hex>" and "docker://sha256:<hex>". The repository is normalised
// as Parse's, and is "" for the bare forms, which do not name one. ok is
// false when imageID carries no well-formed sha256 digest.
func ParseImageID(imageID string) (repository, digest string, ok bool) {
	s := strings.TrimSpace(imageID)
	if rest, found := strings.CutPrefix(s, "docker-pullable://"); found {
		s = rest
	} else if rest, found := strings.CutPrefix(s, "docker://"); found {
		s = rest
	}
	if IsDigest(s) {
		return "", s, true
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || !IsDigest(s[at+1:]) {
		return "", "", false
	}
	repository = Parse(s[:at]).Repository
	if repository == "" {
		return "", "", false
	}
	return repository, s[at+1:], true
}
