package document

import "github.com/aibom-dev/aibom/pkg/imageref"

// ParseImage splits a container image reference as written in a pod spec into
// its normalised repository, its tag and its digest: imageref.Parse, the
// project's one image-reference parser, which says how references are
// normalised. The digest is returned only when the reference is pinned with
// a well-formed "@sha256:<64 lower-case hex>". An empty or blank reference
// gives three empty strings.
func ParseImage(ref string) (repository, tag, digest string) {
	r := imageref.Parse(ref)
	return r.Repository, r.Tag, r.Digest
}

// IsDigest reports whether d is a well-formed SHA-256 content digest,
// "sha256:" followed by 64 lower-case hex digits (imageref.IsDigest).
func IsDigest(d string) bool { return imageref.IsDigest(d) }

// ValidReference reports whether an image reference parses as one (the
// distribution reference grammar, as container runtimes read it): "<image>"
// or "V_IMAGE_URL" (upper case) do not.
func ValidReference(ref string) bool { return imageref.Parse(ref).Valid }
