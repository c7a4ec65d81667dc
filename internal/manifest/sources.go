package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Source is one decoded object and where it was read.
type Source struct {
	Object *unstructured.Unstructured
	// File is the name the stream was read under.
	File string
	// Line is the 1-based line of the document's first line that is neither
	// blank nor a comment.
	Line int
	// Item is the index in the items of a "kind: List" document, -1 for an
	// object that is a document of its own.
	Item int
}

// Position is "file:line", with "(items[i])" for an item of a List.
func (s Source) Position() string {
	if s.Item >= 0 {
		return fmt.Sprintf("%s:%d (items[%d])", s.File, s.Line, s.Item)
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// Files expands files and directories the way Load does: a file is taken as
// is, a directory gives its *.yaml, *.yml and *.json files (not recursively),
// in lexical order.
func Files(paths ...string) ([]string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	return files, nil
}

// LoadSources is Load with positions: every object of files and directories
// (see Files), each with the file and line it was read from.
func LoadSources(paths ...string) ([]Source, error) {
	return LoadSourcesLimited(DefaultLimits, paths...)
}

// LoadSourcesLimited is LoadSources within limits: each file must be a
// regular file within Limits.MaxFileBytes, all together within
// MaxTotalBytes, and no document may expand through YAML aliases beyond
// MaxExpansion times its size. A limit's error wraps ErrLimit and names the
// file.
func LoadSourcesLimited(limits Limits, paths ...string) ([]Source, error) {
	limits = limits.withDefaults()
	files, err := Files(paths...)
	if err != nil {
		return nil, err
	}
	var out []Source
	var total int64
	for _, f := range files {
		data, err := readFile(f, limits.MaxFileBytes)
		if err != nil {
			return nil, err
		}
		total += int64(len(data))
		if total > limits.MaxTotalBytes {
			return nil, fmt.Errorf("%s: the input passes the limit of %d bytes in all: %w", f, limits.MaxTotalBytes, ErrLimit)
		}
		srcs, err := decodeSources(f, data, limits)
		if err != nil {
			return nil, err
		}
		out = append(out, srcs...)
	}
	return out, nil
}

// yamlLine finds the document-relative line in a YAML parser's message.
var yamlLine = regexp.MustCompile(`(yaml: line )(\d+)(:)`)

// DecodeSources is Decode with positions. Documents are separated by lines
// that are "---" (trailing blanks allowed), as for Decode. An error names the
// file and the line: for malformed YAML the line the parser stopped at,
// otherwise the document's first line.
func DecodeSources(name string, data []byte) ([]Source, error) {
	return decodeSources(name, data, DefaultLimits)
}

func decodeSources(name string, data []byte, limits Limits) ([]Source, error) {
	limits = limits.withDefaults()
	var out []Source
	lines := strings.SplitAfter(string(data), "\n")
	var doc strings.Builder
	docStart, first := 1, 0 // first: first line neither blank nor comment, 0 if none
	flush := func() error {
		defer func() { doc.Reset() }()
		if first == 0 {
			return nil
		}
		text := doc.String()
		if err := checkAliases(text, max(limits.MaxExpansion*int64(len(text)), 1<<20)); err != nil {
			return fmt.Errorf("%s:%d: %w", name, first, err)
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal([]byte(text), &obj.Object); err != nil {
			msg := err.Error()
			line := first
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				if n, convErr := strconv.Atoi(m[2]); convErr == nil {
					line = docStart + n - 1
					msg = yamlLine.ReplaceAllString(msg, "${1}"+strconv.Itoa(line)+"${3}")
				}
			}
			return fmt.Errorf("%s:%d: %s", name, line, msg)
		}
		if obj.Object == nil {
			return nil
		}
		if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
			return fmt.Errorf("%s:%d: object without apiVersion or kind", name, first)
		}
		if obj.IsList() {
			list, err := obj.ToList()
			if err != nil {
				return fmt.Errorf("%s:%d: %w", name, first, err)
			}
			for i := range list.Items {
				item := &list.Items[i]
				if item.GetKind() == "" || item.GetAPIVersion() == "" {
					return fmt.Errorf("%s:%d: items[%d]: object without apiVersion or kind", name, first, i)
				}
				out = append(out, Source{Object: item, File: name, Line: first, Item: i})
			}
			return nil
		}
		out = append(out, Source{Object: obj, File: name, Line: first, Item: -1})
		return nil
	}
	for i, l := range lines {
		n := i + 1
		if isSeparator(l) {
			if err := flush(); err != nil {
				return nil, err
			}
			docStart, first = n+1, 0
			continue
		}
		if t := strings.TrimSpace(l); first == 0 && t != "" && !strings.HasPrefix(t, "#") {
			first = n
		}
		doc.WriteString(l)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

func isSeparator(line string) bool {
	rest, ok := strings.CutPrefix(line, "---")
	return ok && strings.TrimRightFunc(rest, unicode.IsSpace) == ""
}

// SyntheticUID is the UID given to an object read from a file that has none:
// derived from its apiVersion, kind, namespace and name (so the same object
// always gets the same UID), formatted as an RFC 4122 UUID of version 8
// (custom).
func SyntheticUID(apiVersion, kind, namespace, name string) types.UID {
	sum := sha256.Sum256([]byte("aibom.dev/synthetic-uid\x00" + apiVersion + "\x00" + kind + "\x00" + namespace + "\x00" + name))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(u)
	return types.UID(h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32])
}

// UnresolvedRef is an ownerReference without a UID whose owner is not in the
// input set.
type UnresolvedRef struct {
	// Object is the object carrying the reference.
	Object *unstructured.Unstructured
	// Ref is the reference.
	Ref metav1.OwnerReference
}

// ResolveOwners gives every object that has no UID one, and fills the UID of
// every ownerReference that names its owner by kind and name only, looking
// the owner up by group, kind, namespace and name within objs (the way Apply
// does against a cluster). Objects are changed in place; namespaces must
// already be set.
//
// An object without a UID takes the UID that a reference naming it carries,
// if any (the lexically smallest when several do), else SyntheticUID. A
// reference whose owner is not in objs keeps its empty UID and is returned,
// sorted by the position of its object in objs.
func ResolveOwners(objs []*unstructured.Unstructured) []UnresolvedRef {
	type key struct{ group, kind, namespace, name string }
	keyOf := func(apiVersion, kind, namespace, name string) key {
		gv, _ := schema.ParseGroupVersion(apiVersion)
		return key{gv.Group, kind, namespace, name}
	}
	refUIDs := map[key][]types.UID{}
	for _, o := range objs {
		for _, r := range o.GetOwnerReferences() {
			if r.UID != "" {
				k := keyOf(r.APIVersion, r.Kind, o.GetNamespace(), r.Name)
				refUIDs[k] = append(refUIDs[k], r.UID)
			}
		}
	}
	uids := map[key]types.UID{}
	for _, o := range objs {
		k := keyOf(o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
		if o.GetUID() == "" {
			if cands := refUIDs[k]; len(cands) > 0 {
				sort.Slice(cands, func(i, j int) bool { return cands[i] < cands[j] })
				o.SetUID(cands[0])
			} else {
				o.SetUID(SyntheticUID(o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName()))
			}
		}
		uids[k] = o.GetUID()
	}
	var unresolved []UnresolvedRef
	for _, o := range objs {
		refs := o.GetOwnerReferences()
		changed := false
		for i := range refs {
			if refs[i].UID != "" {
				continue
			}
			if uid, ok := uids[keyOf(refs[i].APIVersion, refs[i].Kind, o.GetNamespace(), refs[i].Name)]; ok {
				refs[i].UID = uid
				changed = true
				continue
			}
			unresolved = append(unresolved, UnresolvedRef{Object: o, Ref: refs[i]})
		}
		if changed {
			o.SetOwnerReferences(refs)
		}
	}
	return unresolved
}
