package conformance

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// mutation is one malformed variant of a fixture.
type mutation struct {
	// at is the path that was changed.
	at path
	// what says what it became: "a string", "deleted", ...
	what string
	obj  *unstructured.Unstructured
}

func (m mutation) String() string { return fmt.Sprintf("%s %s", m.at, m.what) }

// junk is a replacement value of the wrong type.
type junk struct {
	what string
	make func() any
}

// junkValues are the values every field and subtree is replaced by. Each
// call of make returns a fresh value, so that an adapter that writes into
// its input cannot affect the next mutation.
func junkValues(depth int) []junk {
	return []junk{
		{"replaced by a number", func() any { return int64(7) }},
		{"replaced by a fraction", func() any { return 1.5 }},
		{"replaced by a negative number", func() any { return int64(-1) }},
		{"replaced by a string", func() any { return "conformance-junk" }},
		{"replaced by an empty string", func() any { return "" }},
		{"replaced by a bool", func() any { return true }},
		{"replaced by a list of mixed junk", func() any {
			return []any{int64(1), "x", nil, true, map[string]any{"x": []any{}}, []any{nil}}
		}},
		{"replaced by an empty list", func() any { return []any{} }},
		{"replaced by a map of junk", func() any {
			return map[string]any{"name": int64(3), "image": []any{"x"}, "spec": "x", "": nil}
		}},
		{"replaced by an empty map", func() any { return map[string]any{} }},
		{"replaced by null", func() any { return nil }},
		{fmt.Sprintf("replaced by junk nested %d deep", depth), func() any { return nested(depth) }},
	}
}

// nested builds maps and lists alternating, depth levels deep.
func nested(depth int) any {
	var v any = "bottom"
	for i := 0; i < depth; i++ {
		if i%2 == 0 {
			v = []any{v, int64(i)}
		} else {
			// One reference to v per level: the junk is deep, not wide.
			v = map[string]any{"junk": v, "spec": "x"}
		}
	}
	return v
}

// mutations calls f with every malformed variant of obj, under spec and
// metadata: each value replaced by every junk value, each map entry deleted,
// each list replaced by a list of huge entries (copies of its first element),
// and spec deleted. It stops when f returns false.
func mutations(obj *unstructured.Unstructured, huge, depth int, f func(mutation) bool) {
	junks := junkValues(depth)
	var paths []path
	var lists []path
	for _, root := range []string{"spec", "metadata"} {
		v, ok := obj.Object[root]
		if !ok {
			continue
		}
		walk(v, path{root}, func(p path, v any) {
			paths = append(paths, p)
			if _, ok := v.([]any); ok {
				lists = append(lists, p)
			}
		})
	}
	variant := func(p path, what string, v any, del bool) bool {
		c := cloneObject(obj)
		if !set(c.Object, p, v, del) {
			return true
		}
		return f(mutation{at: p, what: what, obj: c})
	}
	if _, ok := obj.Object["spec"]; ok {
		if !variant(path{"spec"}, "deleted", nil, true) {
			return
		}
	}
	for _, p := range paths {
		for _, j := range junks {
			if !variant(p, j.what, j.make(), false) {
				return
			}
		}
		if _, isKey := p[len(p)-1].(string); isKey && len(p) > 1 {
			if !variant(p, "deleted", nil, true) {
				return
			}
		}
	}
	for _, p := range lists {
		var el any = "conformance-junk"
		c := cloneObject(obj)
		if v := valueAt(c.Object, p); v != nil {
			if l, ok := v.([]any); ok && len(l) > 0 {
				el = l[0]
			}
		}
		big := make([]any, huge)
		for i := range big {
			big[i] = el // shared: the list is read, not copied
		}
		if set(c.Object, p, big, false) {
			if !f(mutation{at: p, what: fmt.Sprintf("replaced by a list of %d copies of its first element", huge), obj: c}) {
				return
			}
		}
	}
}

// valueAt returns the value at p, nil if there is none.
func valueAt(root map[string]any, p path) any {
	var v any = root
	for _, el := range p {
		switch el := el.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[el]
		case int:
			l, ok := v.([]any)
			if !ok || el >= len(l) {
				return nil
			}
			v = l[el]
		}
	}
	return v
}
