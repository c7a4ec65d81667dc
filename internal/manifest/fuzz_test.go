package manifest

import (
	"bytes"
	"regexp"
	"testing"
)

var position = regexp.MustCompile(`^f:[1-9][0-9]*: `)

// FuzzDecodeSources: any stream decodes without panicking; an error names
// the file and a line; every object read has an apiVersion and a kind and a
// line inside the stream.
func FuzzDecodeSources(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # b\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
		`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}{"apiVersion": "v1", "kind": "List", "items": []}`,
		"---\n---\n# c\n---\n\r\n{apiVersion: v1, kind: Pod}\n--- x\n",
		"a: &a [*a]\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n- {kind: Pod}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		srcs, err := DecodeSources("f", data)
		if err != nil {
			if !position.MatchString(err.Error()) {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, s := range srcs {
			if s.Object.GetKind() == "" || s.Object.GetAPIVersion() == "" {
				t.Fatalf("object without kind or apiVersion at %s", s.Position())
			}
			if s.File != "f" || s.Line < 1 || s.Line > lines {
				t.Fatalf("position %s outside a stream of %d lines", s.Position(), lines)
			}
		}
	})
}
