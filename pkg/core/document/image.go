package document

import (
	"strings"

	"github.com/distribution/reference"
)

// defaultRegistry is the registry an image reference without a registry
// host refers to.
const defaultRegistry = "docker.io"

// ParseImage splits a container image reference as written in a pod spec into
// its normalised repository, its tag and its digest.
//
// The repository always names its registry: "nginx",
// "docker.io/library/nginx", "index.docker.io/library/nginx" and
// "registry-1.docker.io/library/nginx" all give "docker.io/library/nginx",
// while "nvcr.io/nvidia/x" and "nvidia/x" ("docker.io/nvidia/x") stay
// distinct. As in the container runtimes, the first path segment is a
// registry host when it contains a '.' or a ':', is "localhost", or has an
// upper-case letter; the host is lower-cased, the path is kept as written.
//
// The tag is the text after the last ':' of the last path segment, or "" when
// the reference has none (no "latest" is assumed). The digest is returned only
// when the reference is pinned with a well-formed "@sha256:<64 lower-case
// hex>"; any other text after '@' is dropped and the digest is "". An empty or
// blank reference gives three empty strings.
func ParseImage(ref string) (repository, tag, digest string) {
	s := strings.TrimSpace(ref)
	if s == "" {
		return "", "", ""
	}
	if at := strings.IndexByte(s, '@'); at >= 0 {
		if d := s[at+1:]; IsDigest(d) {
			digest = d
		}
		s = s[:at]
	}
	slash := strings.LastIndexByte(s, '/')
	if colon := strings.LastIndexByte(s, ':'); colon > slash {
		tag = s[colon+1:]
		s = s[:colon]
	}
	return normaliseRepository(s), tag, digest
}

// normaliseRepository qualifies a repository with its registry, the way the
// container runtimes do.
func normaliseRepository(s string) string {
	s = strings.Trim(s, "/")
	if s == "" {
		return ""
	}
	host, path, found := strings.Cut(s, "/")
	if !found || !(strings.ContainsAny(host, ".:") || host == "localhost" || host != strings.ToLower(host)) {
		host, path = defaultRegistry, s
	}
	host = strings.ToLower(host)
	if host == "index.docker.io" || host == "registry-1.docker.io" {
		host = defaultRegistry
	}
	if host == defaultRegistry && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	return host + "/" + path
}

// IsDigest reports whether d is a well-formed SHA-256 content digest,
// "sha256:" followed by 64 lower-case hex digits.
func IsDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ValidReference reports whether an image reference parses as one (the
// distribution reference grammar, as container runtimes read it): "<image>"
// or "V_IMAGE_URL" (upper case) do not.
func ValidReference(ref string) bool {
	_, err := reference.ParseNormalizedNamed(strings.TrimSpace(ref))
	return err == nil
}
