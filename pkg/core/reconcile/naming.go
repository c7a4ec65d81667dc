package reconcile

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
//
// When the kind and name fit whole, they tell subjects apart and a 32-bit
// hash only separates groups. When the prefix is shortened, the hash alone
// tells subjects apart: it is then 64 bits, so that a tenant cannot find a
// colliding long name (32 bits fell to a search of 36,000 names).
func AIBOMName(gk schema.GroupKind, name string) string {
	return aibomName(gk, name, 8)
}

// LegacyAIBOMName is the name earlier releases gave a subject whose name is
// shortened (a 32-bit hash), and ok is false when it is the current name:
// the reconciler deletes the AIBOM under the old name once it writes the
// new one.
func LegacyAIBOMName(gk schema.GroupKind, name string) (legacy string, ok bool) {
	if len(gk.Kind)+1+len(name)+9 <= maxNameLength {
		// Not shortened: the name is the same in every release (and no
		// hash is computed on the reconcile path).
		return "", false
	}
	legacy = aibomName(gk, name, 4)
	return legacy, legacy != AIBOMName(gk, name)
}

// aibomName is "<kind>-<name>-<hash>" with a 4-byte hash, or a longHash-byte
// one when the prefix has to be shortened.
func aibomName(gk schema.GroupKind, name string, longHash int) string {
	sum := sha256.Sum256([]byte(gk.Group + "/" + gk.Kind + "/" + name))
	suffix := "-" + hex.EncodeToString(sum[:4])
	prefix := strings.ToLower(gk.Kind) + "-" + name
	if len(prefix)+len(suffix) > maxNameLength {
		suffix = "-" + hex.EncodeToString(sum[:longHash])
		prefix = strings.TrimRight(prefix[:maxNameLength-len(suffix)], ".-")
	}
	return prefix + suffix
}
