package manifest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"unicode"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
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

// Stdin is the path that names standard input ("-f -").
const Stdin = "-"

// StdinName is the name standard input is read under, in positions.
const StdinName = "<stdin>"

// manifestExt reports whether a file found in a directory is read: *.yaml,
// *.yml and *.json.
func manifestExt(name string) bool {
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Files expands files and directories the way Load does: a file is taken as
// is, a directory gives its *.yaml, *.yml and *.json files (not recursively),
// in lexical order.
func Files(paths ...string) ([]string, error) { return expand(false, paths) }

// expand is Files, walking directories recursively when recursive (in
// lexical order, symbolic links to directories not followed). Stdin is kept
// as is.
func expand(recursive bool, paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		if p == Stdin {
			files = append(files, p)
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		if recursive {
			err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() && manifestExt(d.Name()) {
					files = append(files, path)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() && manifestExt(e.Name()) {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	return files, nil
}

// ReadOptions tune ReadFiles.
type ReadOptions struct {
	// Limits bound the input (DefaultLimits when zero).
	Limits Limits
	// Recursive walks directories recursively.
	Recursive bool
	// Stdin is read for the path "-" (os.Stdin when nil), under the name
	// StdinName, within Limits.MaxFileBytes.
	Stdin io.Reader
	// Each, when set, is called with every object as soon as it is
	// decoded, in order, and what it returns is kept in File.Sources
	// instead: a caller that keeps objects in a smaller form gets each one
	// before the next is decoded, so the decoded forms of a whole file are
	// never held at once. An error fails the file as a decoding error does.
	Each func(Source) (Source, error)
}

// File is the outcome of reading one file.
type File struct {
	// Name is the path read, or StdinName.
	Name string
	// Sources are its objects, in order; none when Err is set.
	Sources []Source
	// Err says why the file could not be read or decoded (it names the
	// file and, for a malformed document, the line). A file with an error
	// gives no object at all: half a file would mislead.
	Err error
}

// ReadFiles reads every file of paths (see Files; "-" is standard input,
// read once). It fails only when a path cannot be expanded (it does not
// exist) or the input passes Limits.MaxTotalBytes; a file that cannot be
// read or decoded, or passes Limits.MaxFileBytes, is returned with its Err
// and the others are read.
func ReadFiles(opts ReadOptions, paths ...string) ([]File, error) {
	limits := opts.Limits.withDefaults()
	files, err := expand(opts.Recursive, paths)
	if err != nil {
		return nil, err
	}
	var out []File
	var total int64
	stdinRead := false
	for _, f := range files {
		name := f
		var data []byte
		var err error
		if f == Stdin {
			name = StdinName
			if stdinRead {
				return nil, fmt.Errorf("%q is given more than once: standard input is read once", Stdin)
			}
			stdinRead = true
			in := opts.Stdin
			if in == nil {
				in = os.Stdin
			}
			data, err = readStream(in, limits.MaxFileBytes)
		} else {
			data, err = readFile(f, limits.MaxFileBytes)
		}
		if err != nil {
			out = append(out, File{Name: name, Err: err})
			continue
		}
		total += int64(len(data))
		if total > limits.MaxTotalBytes {
			return nil, fmt.Errorf("%s: the input passes the limit of %d bytes in all: %w", name, limits.MaxTotalBytes, ErrLimit)
		}
		srcs, err := decodeSources(name, data, limits, opts.Each)
		data = nil // the decoded objects outlive the bytes
		out = append(out, File{Name: name, Sources: srcs, Err: err})
		if err != nil {
			out[len(out)-1].Sources = nil
		}
	}
	return out, nil
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
// file. The first file that cannot be read fails the whole load.
func LoadSourcesLimited(limits Limits, paths ...string) ([]Source, error) {
	files, err := ReadFiles(ReadOptions{Limits: limits}, paths...)
	if err != nil {
		return nil, err
	}
	var out []Source
	for _, f := range files {
		if f.Err != nil {
			return nil, f.Err
		}
		out = append(out, f.Sources...)
	}
	return out, nil
}

// yamlLine finds the document-relative line in a YAML parser's message.
var yamlLine = regexp.MustCompile(`(yaml: line )(\d+)(:)`)

// DecodeSources is Decode with positions. A stream is a series of YAML
// documents separated by "---" lines (a comment may follow the
// separator), or a series of JSON objects; apimachinery's readers split
// it. An error names the file and the line: for malformed YAML the line
// the parser stopped at, otherwise the document's first line.
func DecodeSources(name string, data []byte) ([]Source, error) {
	return decodeSources(name, data, DefaultLimits, nil)
}

// keepFunc is ReadOptions.Each (nil: keep every object as decoded).
type keepFunc func(Source) (Source, error)

func (k keepFunc) keep(out []Source, s Source) ([]Source, error) {
	if k != nil {
		var err error
		if s, err = k(s); err != nil {
			return nil, err
		}
	}
	return append(out, s), nil
}

func decodeSources(name string, data []byte, limits Limits, each keepFunc) ([]Source, error) {
	limits = limits.withDefaults()
	if utilyaml.IsJSONBuffer(data) {
		if srcs, isJSON, err := decodeJSONStream(name, data, each); isJSON {
			return srcs, err
		}
	}
	return decodeYAMLStream(name, data, limits, each)
}

// decodeJSONStream reads a stream of JSON objects ("{...}{...}", one per
// line or not). isJSON is false when the first value is not JSON (a YAML
// flow mapping starts with "{" too): the stream is then read as YAML.
func decodeJSONStream(name string, data []byte, each keepFunc) (out []Source, isJSON bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var end int64
	for n := 0; ; n++ {
		start := end + int64(len(data[end:])-len(bytes.TrimLeftFunc(data[end:], unicode.IsSpace)))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, true, nil
			}
			if n == 0 {
				return nil, false, nil
			}
			off := start
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				off = syntax.Offset
			}
			return nil, true, fmt.Errorf("%s:%d: %s", name, lineOf(data, off), err)
		}
		end = dec.InputOffset()
		line := lineOf(data, start)
		if items, ok := jsonListItems(raw); ok {
			// A list is decoded item by item: the decoded form of the
			// whole list is never held at once.
			for i, item := range items {
				if out, err = keepJSONItem(out, name, line, i, item, each); err != nil {
					return nil, true, err
				}
			}
			continue
		}
		if out, err = toSources(out, name, line, raw, true, nil, each); err != nil {
			return nil, true, err
		}
	}
}

// jsonListItems returns the items of a JSON object with an "items" array
// (a list, as apimachinery's IsList decides it), each as its JSON; false for
// anything else.
func jsonListItems(raw []byte) ([]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var items []json.RawMessage
	found := false
	typed := map[string]bool{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		if key != "items" {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, false
			}
			if k, _ := key.(string); k == "apiVersion" || k == "kind" {
				var str string
				typed[k] = json.Unmarshal(v, &str) == nil && str != ""
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, false // "items" that is not an array: not a list
		}
		found = true
		for dec.More() {
			var item json.RawMessage
			if err := dec.Decode(&item); err != nil {
				return nil, false
			}
			items = append(items, item)
		}
		if _, err := dec.Token(); err != nil {
			return nil, false
		}
	}
	// A list without its own apiVersion and kind is decoded whole, which
	// refuses it as before.
	return items, found && typed["apiVersion"] && typed["kind"]
}

// keepJSONItem decodes item i of a JSON list read at line and keeps it.
func keepJSONItem(out []Source, name string, line, i int, item []byte, each keepFunc) ([]Source, error) {
	obj := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(item, &obj.Object); err != nil {
		return nil, fmt.Errorf("%s:%d: items[%d]: %s", name, line, i, err)
	}
	if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, fmt.Errorf("%s:%d: items[%d]: object without apiVersion or kind", name, line, i)
	}
	return each.keep(out, Source{Object: obj, File: name, Line: line, Item: i})
}

// lineOf is the 1-based line of byte offset off.
func lineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// lineFeeder hands a bufio.Reader one line per Read, so that the bytes it
// has given out always end at the line apimachinery's YAMLReader consumed
// last: the reader splits, the feeder knows where.
type lineFeeder struct {
	data []byte
	off  int
}

func (f *lineFeeder) Read(p []byte) (int, error) {
	if f.off >= len(f.data) {
		return 0, io.EOF
	}
	rest := f.data[f.off:]
	n := bytes.IndexByte(rest, '\n') + 1
	if n == 0 {
		n = len(rest)
	}
	n = copy(p, rest[:n])
	f.off += n
	return n, nil
}

// lastLine returns the number of the last line handed out and its text.
func (f *lineFeeder) lastLine() (int, []byte) {
	consumed := f.data[:f.off]
	n := bytes.Count(consumed, []byte("\n"))
	if len(consumed) > 0 && consumed[len(consumed)-1] != '\n' {
		n++ // a last line without a newline
	}
	start := bytes.LastIndexByte(bytes.TrimSuffix(consumed, []byte("\n")), '\n') + 1
	return n, consumed[start:]
}

// decodeYAMLStream splits a YAML stream into documents with apimachinery's
// YAMLReader and decodes each.
func decodeYAMLStream(name string, data []byte, limits Limits, each keepFunc) ([]Source, error) {
	feeder := &lineFeeder{data: data}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(feeder))
	var out []Source
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		last, lastText := feeder.lastLine()
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, last, err)
		}
		// The document's lines end just before the separator that ended
		// it (or at the last line read, at the end of the stream).
		end := last
		if bytes.HasPrefix(lastText, []byte(separator)) {
			end--
		}
		docStart := end - bytes.Count(doc, []byte("\n")) + 1
		if out, err = decodeDocument(out, name, docStart, doc, limits, each); err != nil {
			return nil, err
		}
	}
}

const separator = "---"

// decodeDocument decodes one YAML document whose first line is line
// docStart of the file.
func decodeDocument(out []Source, name string, docStart int, doc []byte, limits Limits, each keepFunc) ([]Source, error) {
	first := 0 // first line neither blank, a comment nor a separator
	for i, l := range bytes.SplitAfter(doc, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && t[0] != '#' && !bytes.HasPrefix(l, []byte(separator)) {
			first = docStart + i
			break
		}
	}
	if first == 0 {
		return out, nil // blank or comments only
	}
	if err := checkAliases(string(doc), max(limits.MaxExpansion*int64(len(doc)), 1<<20)); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, first, err)
	}
	return toSources(out, name, first, doc, false, func(msg string) (int, string) {
		m := yamlLine.FindStringSubmatch(msg)
		if m == nil {
			return first, msg
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return first, msg
		}
		line := docStart + n - 1
		return line, yamlLine.ReplaceAllString(msg, "${1}"+strconv.Itoa(line)+"${3}")
	}, each)
}

// toSources decodes one document (YAML, or JSON when isJSON) read at line
// first and appends its objects to out, each through each; a "kind: List"
// gives its items. position maps a parser's message to the line it names
// (nil: the document's first line). A JSON document is decoded as JSON: the
// YAML parser would first build a node tree of the whole document, several
// times its size.
func toSources(out []Source, name string, first int, doc []byte, isJSON bool, position func(msg string) (int, string), each keepFunc) ([]Source, error) {
	obj := &unstructured.Unstructured{}
	unmarshal := utilyaml.Unmarshal
	if isJSON {
		unmarshal = utiljson.Unmarshal
	}
	if err := unmarshal(doc, &obj.Object); err != nil {
		line, msg := first, err.Error()
		if position != nil {
			line, msg = position(msg)
		}
		return nil, fmt.Errorf("%s:%d: %s", name, line, msg)
	}
	if obj.Object == nil {
		return out, nil
	}
	if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, fmt.Errorf("%s:%d: object without apiVersion or kind", name, first)
	}
	if !obj.IsList() {
		return each.keep(out, Source{Object: obj, File: name, Line: first, Item: -1})
	}
	list, err := obj.ToList()
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, first, err)
	}
	obj = nil
	for i := range list.Items {
		item := &unstructured.Unstructured{Object: list.Items[i].Object}
		list.Items[i].Object = nil // the list holds no item once it is kept
		if item.GetKind() == "" || item.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s:%d: items[%d]: object without apiVersion or kind", name, first, i)
		}
		if out, err = each.keep(out, Source{Object: item, File: name, Line: first, Item: i}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SyntheticUID is the UID given to an object read from a file that has none:
// derived from its apiVersion, kind, namespace and name (so the same object
// always gets the same UID), formatted as an RFC 4122 UUID of version 8
// (custom).
func SyntheticUID(apiVersion, kind, namespace, name string) types.UID {
	sum := sha256.Sum256([]byte("aibom.dev/synthetic-uid\x00" + apiVersion + "\x00" + kind + "\x00" + namespace + "\x00" + name))
	var u uuid.UUID
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return types.UID(u.String())
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
