package conformance

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// path is a location in an unstructured object: map keys (string) and list
// indexes (int).
type path []any

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// String renders a path the way adapters write locators:
// "spec.template.spec.containers[0].image"; a key that is not a plain word
// is written in brackets: "metadata.annotations[model.aibom.dev/base]".
func (p path) String() string {
	var b strings.Builder
	for i, el := range p {
		switch el := el.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(el) + "]")
		case string:
			if !plainKey.MatchString(el) {
				b.WriteString("[" + el + "]")
				continue
			}
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(el)
		}
	}
	if b.Len() == 0 {
		return "<root>"
	}
	return b.String()
}

func (p path) with(el any) path {
	out := make(path, len(p), len(p)+1)
	copy(out, p)
	return append(out, el)
}

// walk calls f for v and every value below it, maps in sorted key order.
func walk(v any, p path, f func(p path, v any)) {
	f(p, v)
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(v[k], p.with(k), f)
		}
	case []any:
		for i, x := range v {
			walk(x, p.with(i), f)
		}
	}
}

// set replaces the value at p in root (p non-empty); del removes it instead.
// It reports whether the path existed.
func set(root map[string]any, p path, v any, del bool) bool {
	var parent any = root
	for i, el := range p {
		last := i == len(p)-1
		switch el := el.(type) {
		case string:
			m, ok := parent.(map[string]any)
			if !ok {
				return false
			}
			if last {
				if _, ok := m[el]; !ok && del {
					return false
				}
				if del {
					delete(m, el)
				} else {
					m[el] = v
				}
				return true
			}
			parent = m[el]
		case int:
			l, ok := parent.([]any)
			if !ok || el >= len(l) {
				return false
			}
			if last {
				if del {
					// Lists cannot shrink in place: the parent holds the
					// slice header. Replace the element by the last one's
					// absence through the grandparent.
					return setList(root, p[:i], append(append([]any{}, l[:el]...), l[el+1:]...))
				}
				l[el] = v
				return true
			}
			parent = l[el]
		}
	}
	return false
}

func setList(root map[string]any, p path, l []any) bool {
	if len(p) == 0 {
		return false
	}
	return set(root, p, l, false)
}

// firstChange finds the first path where two unstructured values differ.
func firstChange(before, after any, p path) (path, any, any, bool) {
	switch b := before.(type) {
	case map[string]any:
		a, ok := after.(map[string]any)
		if !ok {
			return p, before, after, true
		}
		keys := map[string]bool{}
		for k := range b {
			keys[k] = true
		}
		for k := range a {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			bv, bok := b[k]
			av, aok := a[k]
			if bok != aok {
				return p.with(k), describeAbsent(bv, bok), describeAbsent(av, aok), true
			}
			if q, x, y, ok := firstChange(bv, av, p.with(k)); ok {
				return q, x, y, true
			}
		}
		return nil, nil, nil, false
	case []any:
		a, ok := after.([]any)
		if !ok || len(a) != len(b) {
			return p, before, after, true
		}
		for i := range b {
			if q, x, y, ok := firstChange(b[i], a[i], p.with(i)); ok {
				return q, x, y, true
			}
		}
		return nil, nil, nil, false
	default:
		if !reflect.DeepEqual(before, after) {
			return p, before, after, true
		}
		return nil, nil, nil, false
	}
}

type absent struct{}

func (absent) String() string { return "<absent>" }

func describeAbsent(v any, ok bool) any {
	if !ok {
		return absent{}
	}
	return v
}

// short renders a value for a report, cut to a readable length.
func short(v any) string {
	s := fmt.Sprintf("%#v", v)
	if _, ok := v.(absent); ok {
		s = "<absent>"
	}
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
