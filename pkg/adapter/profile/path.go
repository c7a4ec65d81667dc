package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aibom-dev/aibom/pkg/adapter/fields"
)

// Bounds on what one path may cost. A profile is data written by someone
// else: its paths must not make a scrape slow or large.
const (
	// MaxPathSegments bounds the length of a path.
	MaxPathSegments = 32
	// MaxMatches bounds the nodes one rule selects in one object.
	MaxMatches = 512
	// MaxRecurseDepth bounds how deep Recurse descends.
	MaxRecurseDepth = 16
)

// segKind is what one path segment selects.
type segKind int

const (
	segField  segKind = iota // a map key
	segIndex                 // one list element
	segEach                  // every list element
	segValues                // every map value, in key order
)

type segment struct {
	kind  segKind
	name  string
	index int
}

// path is a parsed field path.
type path []segment

// parsePath parses "a.b[*].c", "a.*.template", "a[2]". An empty string is
// the empty path (the node itself).
func parsePath(s string) (path, error) {
	s = strings.TrimPrefix(s, ".")
	if s == "" {
		return nil, nil
	}
	var out path
	for _, part := range splitOutsideBrackets(s) {
		if part == "" {
			return nil, fmt.Errorf("path %q: empty field name", s)
		}
		name, rest, _ := strings.Cut(part, "[")
		switch {
		case name == "*":
			out = append(out, segment{kind: segValues})
		case name != "":
			if strings.ContainsAny(name, "]*") {
				return nil, fmt.Errorf("path %q: bad field name %q", s, name)
			}
			out = append(out, segment{kind: segField, name: name})
		}
		if rest == "" && strings.Contains(part, "[") {
			return nil, fmt.Errorf("path %q: unterminated [", s)
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("path %q: unterminated [", s)
			}
			switch {
			case idx == "*":
				out = append(out, segment{kind: segEach})
			case idx == "":
				return nil, fmt.Errorf("path %q: empty []", s)
			case idx[0] >= '0' && idx[0] <= '9':
				n, err := strconv.Atoi(idx)
				if err != nil || n < 0 || n > 1<<20 {
					return nil, fmt.Errorf("path %q: index %q is not a non-negative number", s, idx)
				}
				out = append(out, segment{kind: segIndex, index: n})
			default:
				// A key holding dots or slashes: "annotations[kaito.sh/runtime]".
				out = append(out, segment{kind: segField, name: idx})
			}
			if after == "" {
				break
			}
			if !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("path %q: unexpected %q after ]", s, after)
			}
			rest = after[1:]
		}
		if name == "" && !strings.HasPrefix(part, "[") {
			return nil, fmt.Errorf("path %q: empty field name", s)
		}
	}
	if len(out) > MaxPathSegments {
		return nil, fmt.Errorf("path %q: more than %d segments", s, MaxPathSegments)
	}
	return out, nil
}

// splitOutsideBrackets splits a path at the dots that are not inside [].
func splitOutsideBrackets(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case '.':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// node is one value a path selected, with its locator and the last
// wildcard it went through (for groups).
type node struct {
	value   any
	locator string
	// wildcard is the map key or list element name (else index) of the
	// last wildcard on the way, "" when none.
	wildcard string
}

// errTooMany reports a selection over MaxMatches.
var errTooMany = fmt.Errorf("selects more than %d nodes", MaxMatches)

// eval returns the nodes p selects below start (located at loc). An absent
// field or an out-of-range index selects nothing; a value of the wrong type
// on the way (a string where the path needs an object) is an error naming
// its locator.
func (p path) eval(start node) ([]node, error) {
	cur := []node{start}
	for _, seg := range p {
		var next []node
		for _, n := range cur {
			if n.value == nil {
				continue
			}
			switch seg.kind {
			case segField:
				m, ok := n.value.(map[string]any)
				if !ok {
					return nil, fields.TypeError(n.locator, "object", n.value)
				}
				if v, ok := m[seg.name]; ok && v != nil {
					next = append(next, node{value: v, locator: fields.Path(n.locator, seg.name), wildcard: n.wildcard})
				}
			case segIndex:
				l, ok := n.value.([]any)
				if !ok {
					return nil, fields.TypeError(n.locator, "list", n.value)
				}
				if seg.index < len(l) && l[seg.index] != nil {
					next = append(next, node{value: l[seg.index], locator: fmt.Sprintf("%s[%d]", n.locator, seg.index), wildcard: n.wildcard})
				}
			case segEach:
				l, ok := n.value.([]any)
				if !ok {
					return nil, fields.TypeError(n.locator, "list", n.value)
				}
				for i, v := range l {
					if v == nil {
						continue
					}
					w := strconv.Itoa(i)
					if m, ok := v.(map[string]any); ok {
						if name, ok := m["name"].(string); ok && name != "" {
							w = name
						}
					}
					next = append(next, node{value: v, locator: fmt.Sprintf("%s[%d]", n.locator, i), wildcard: w})
				}
			case segValues:
				m, ok := n.value.(map[string]any)
				if !ok {
					return nil, fields.TypeError(n.locator, "object", n.value)
				}
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					if m[k] == nil {
						continue
					}
					next = append(next, node{value: m[k], locator: fields.Path(n.locator, k), wildcard: k})
				}
			}
			if len(next) > MaxMatches {
				return nil, fmt.Errorf("%s: %w", n.locator, errTooMany)
			}
		}
		cur = next
	}
	return cur, nil
}

// scalar returns a node's value as a string: strings as they are, numbers
// and booleans formatted; ok is false for objects and lists.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case int:
		return strconv.Itoa(x), true
	}
	return "", false
}
