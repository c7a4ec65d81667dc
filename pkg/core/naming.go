package core

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxNameLength is the limit on an object name (a DNS subdomain).
const maxNameLength = 253

// AIBOMName derives the AIBOM object's name from its subject's group, kind
// and name: "<kind>-<name>-<hash>", lower case, where the hash covers group,
// kind and name so that kinds of the same name in different groups never
// collide. Long names are shortened to stay within 253 characters; the hash
// keeps them unique.
func AIBOMName(gk schema.GroupKind, name string) string {
	sum := sha256.Sum256([]byte(gk.Group + "/" + gk.Kind + "/" + name))
	suffix := "-" + hex.EncodeToString(sum[:4])
	prefix := strings.ToLower(gk.Kind) + "-" + name
	if len(prefix)+len(suffix) > maxNameLength {
		prefix = strings.TrimRight(prefix[:maxNameLength-len(suffix)], ".-")
	}
	return prefix + suffix
}
