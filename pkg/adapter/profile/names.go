package profile

import (
	"fmt"
	"strings"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// MaxNameFields bounds the fields one container name pattern reads.
const MaxNameFields = 4

// namePattern is a compiled container name: literal parts and the fields
// put between them. A constant name has one part and no field.
type namePattern struct {
	parts  []string // len(fields)+1 literals
	fields []nameField
}

type nameField struct {
	path     path
	fromRoot bool
}

func (p namePattern) constant() string {
	if len(p.fields) == 0 {
		return p.parts[0]
	}
	return ""
}

// compileContainerName validates a containers rule's name: exactly one of
// name and namePattern; literals of a Kubernetes container name (lower-case
// letters, digits, '-'); every field a path that selects at most one value.
// Anything that could give an empty or ambiguous name is refused here, at
// load, with the rule's path.
func compileContainerName(c v1alpha1.ContainerRule, loc string) (namePattern, error) {
	switch {
	case c.Name != "" && c.NamePattern != "":
		return namePattern{}, fmt.Errorf("%s: name and namePattern are exclusive", loc)
	case strings.TrimSpace(c.Name) != "":
		if !containerNameChars(c.Name) || strings.HasPrefix(c.Name, "-") || strings.HasSuffix(c.Name, "-") {
			return namePattern{}, fmt.Errorf("%s.name %q is not a container name (lower-case letters, digits and inner '-')", loc, c.Name)
		}
		return namePattern{parts: []string{c.Name}}, nil
	case strings.TrimSpace(c.NamePattern) == "":
		return namePattern{}, fmt.Errorf("%s: name or namePattern is required: the core matches the pods' container by name", loc)
	}
	loc += ".namePattern"
	var out namePattern
	rest := c.NamePattern
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.ContainsRune(rest, '}') {
				return namePattern{}, fmt.Errorf("%s %q: '}' without '{'", loc, c.NamePattern)
			}
			out.parts = append(out.parts, rest)
			break
		}
		lit := rest[:open]
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return namePattern{}, fmt.Errorf("%s %q: '{' without '}'", loc, c.NamePattern)
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		if strings.ContainsRune(lit, '}') {
			return namePattern{}, fmt.Errorf("%s %q: '}' without '{'", loc, c.NamePattern)
		}
		if len(out.fields) > 0 && lit == "" {
			// "{a}{b}": "x-y"+"z" and "x"+"-yz" give the same name.
			return namePattern{}, fmt.Errorf("%s %q: two fields need a literal between them, or the name is ambiguous", loc, c.NamePattern)
		}
		out.parts = append(out.parts, lit)
		field, fromRoot := strings.CutPrefix(expr, "$.")
		p, err := parsePath(field)
		if err != nil || len(p) == 0 {
			return namePattern{}, fmt.Errorf("%s %q: {%s} is not a field path", loc, c.NamePattern, expr)
		}
		for _, seg := range p {
			if seg.kind == segEach || seg.kind == segValues {
				return namePattern{}, fmt.Errorf("%s %q: {%s} has a wildcard: one container needs one name", loc, c.NamePattern, expr)
			}
		}
		out.fields = append(out.fields, nameField{path: p, fromRoot: fromRoot})
		if len(out.fields) > MaxNameFields {
			return namePattern{}, fmt.Errorf("%s %q: more than %d fields", loc, c.NamePattern, MaxNameFields)
		}
	}
	for _, lit := range out.parts {
		if !containerNameChars(lit) {
			return namePattern{}, fmt.Errorf("%s %q: %q is not part of a container name (lower-case letters, digits, '-')", loc, c.NamePattern, lit)
		}
	}
	return out, nil
}

func containerNameChars(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return len(s) <= 63
}

// build returns the name for one selected node, "" when a field is empty
// or absent (no container is added for that node), or an error when a
// field is not a string or the result is not a container name.
func (p namePattern) build(n, root node, prefix string) (string, error) {
	if c := p.constant(); c != "" {
		return c, nil
	}
	var b strings.Builder
	b.WriteString(p.parts[0])
	for i, f := range p.fields {
		from := n
		if f.fromRoot {
			from = root
		}
		nodes, err := f.path.eval(from)
		if err != nil {
			return "", err
		}
		if len(nodes) == 0 {
			return "", nil
		}
		v, ok := scalar(nodes[0].value)
		if !ok {
			return "", fmt.Errorf("%s%s: a container name part must be a string", prefix, nodes[0].locator)
		}
		v = strings.TrimSpace(v)
		if v == "" {
			return "", nil
		}
		b.WriteString(v)
		b.WriteString(p.parts[i+1])
	}
	name := b.String()
	if !containerNameChars(name) || strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		return "", fmt.Errorf("%scontainer name %q built from the fields is not a container name", prefix, name)
	}
	return name, nil
}
