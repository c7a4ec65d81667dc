package profile

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// DecodeError is a profile file that does not decode: the field path and,
// where the decoder knows it, the line and column.
type DecodeError struct {
	// Format is YAML or JSON, as the file was written.
	Format string
	// Path is the field's path, "spec.kinds[0].rules.containers[0].name";
	// empty for a syntax error.
	Path string
	// Line and Column are 1-based; 0 when unknown.
	Line, Column int
	// Msg says what is wrong.
	Msg string
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString(e.Format)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, " column %d", e.Column)
		}
	}
	if e.Path != "" {
		fmt.Fprintf(&b, ", %s", e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// format says how a file was written: JSON when it starts with '{'.
func format(data []byte) string {
	if t := strings.TrimLeft(string(data[:min(len(data), 64)]), " \t\r\n"); strings.HasPrefix(t, "{") {
		return "JSON"
	}
	return "YAML"
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkFields decodes data as YAML (JSON is YAML) and checks every field
// against the Go type the object decodes into, with the json names the
// API uses: an unknown field or a value of the wrong shape is a
// DecodeError with its path and line. The decoding itself is left to
// sigs.k8s.io/yaml, as the API server does it; this pass only says where.
func checkFields(data []byte, t reflect.Type) error {
	f := format(data)
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
			_, msg, _ = strings.Cut(msg, ": ")
		}
		return &DecodeError{Format: f, Line: line, Msg: msg}
	}
	if len(doc.Content) == 0 {
		return &DecodeError{Format: f, Msg: "the file is empty"}
	}
	return walk(doc.Content[0], t, "", f)
}

func walk(n *yaml.Node, t reflect.Type, p string, f string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	fail := func(format string, args ...any) error {
		return &DecodeError{Format: f, Path: p, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
	}
	// Types that decode themselves (metav1.Time, resource.Quantity) are
	// left to their decoder.
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fail("want an object, got %s", shape(n))
		}
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				return &DecodeError{Format: f, Path: join(p, k.Value), Line: k.Line, Column: k.Column,
					Msg: fmt.Sprintf("unknown field %q%s", k.Value, known(fields))}
			}
			if err := walk(v, ft, join(p, k.Value), f); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return fail("want an object, got %s", shape(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := walk(n.Content[i+1], t.Elem(), join(p, n.Content[i].Value), f); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte: base64 text
		}
		if n.Kind != yaml.SequenceNode {
			return fail("want a list, got %s", shape(n))
		}
		for i, e := range n.Content {
			if err := walk(e, t.Elem(), fmt.Sprintf("%s[%d]", p, i), f); err != nil {
				return err
			}
		}
	case reflect.Interface:
		return nil
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return fail("want true or false, got %s", shape(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return fail("want a whole number, got %s", shape(n))
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			return fail("want a number, got %s", shape(n))
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return fail("want a string, got %s", shape(n))
		}
	}
	return nil
}

func shape(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

func join(p, k string) string {
	if p == "" {
		return k
	}
	if strings.ContainsAny(k, ".[]/ ") {
		return p + "[" + k + "]"
	}
	return p + "." + k
}

// known lists the fields an object may have, for a misspelt one.
func known(fields map[string]reflect.Type) string {
	if len(fields) == 0 || len(fields) > 40 {
		return ""
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	return " (known: " + strings.Join(names, ", ") + ")"
}

// jsonFields maps a struct's json names to their types, embedded and
// inline structs included.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if (sf.Anonymous && name == "") || strings.Contains(","+opts+",", ",inline,") {
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = sf.Type
	}
	return out
}

// rulePath finds the field path a Compile error names
// ("spec.kinds[0].rules.containers[1].namePattern").
var rulePath = regexp.MustCompile(`spec\.kinds\[[0-9]+\](?:\.[A-Za-z]+|\[[0-9]+\])*`)

// lineOf returns the line of the deepest node of data on the path an error
// names, 0 when the error names none or data does not decode.
func lineOf(data []byte, err error) int {
	p := rulePath.FindString(err.Error())
	if p == "" {
		return 0
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n := doc.Content[0]
	line := 0
	for _, part := range splitOutsideBrackets(p) {
		name, rest, _ := strings.Cut(part, "[")
		if n = mapValue(n, name); n == nil {
			return line
		}
		line = n.Line
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			i, convErr := strconv.Atoi(idx)
			if n.Kind != yaml.SequenceNode || convErr != nil || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return line
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
