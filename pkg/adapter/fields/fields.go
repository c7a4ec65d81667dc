// Package fields reads fields of unstructured Kubernetes objects (the
// map[string]any and []any trees of unstructured.Unstructured.Object) for
// adapters, with a locator for errors.
//
// Every reader takes the map m, the key to read and path, the locator of m
// in its object ("" for the object itself, "spec.template" for a pod
// template). An absent key, a null value or a nil m is "not set": the zero
// value and no error. A value of the wrong type is an error naming the
// field's full locator and the JSON type found, e.g.
//
//	spec.template: expected object, got string
//
// Locators are dotted paths; a map key that is not a plain identifier is
// written in brackets (see Path).
package fields

import (
	"fmt"
	"math"
	"regexp"
)

// plainKey matches map keys that can be written after a dot in a locator.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// Path is the locator of key in the object located at parent:
// "spec.template" for a plain key (letters, digits, '_' and '-', not
// starting with '-'), "spec.services[odd.key]" for a key holding dots,
// slashes, spaces or other characters that would make the dotted form
// ambiguous. A plain key of the object itself (parent "") is the key alone.
func Path(parent, key string) string {
	if !plainKey.MatchString(key) {
		return parent + "[" + key + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Describe names the JSON type of an unstructured value, for error
// messages: "null", "string", "boolean", "number", "list" or "object". A
// value of any other Go type is named by its Go type.
func Describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int32, int64, float32, float64:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// TypeError is the error for the value v found at path when a value of the
// JSON type want ("object", "list", "string", ...) was expected:
// "<path>: expected <want>, got <Describe(v)>".
func TypeError(path, want string, v any) error {
	return fmt.Errorf("%s: expected %s, got %s", path, want, Describe(v))
}

// Integer reads a JSON number that holds an integer: an int, int32 or int64,
// or a float64 with no fractional part within the range of int64. Anything
// else (a fraction, a string, null, ...) is not an integer. It suits
// optional scalars that are skipped, not reported, when malformed; Int is
// the strict reader.
func Integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && n >= -(1<<63) && n < 1<<63 {
			return int64(n), true
		}
	}
	return 0, false
}

// maxExact bounds the float64 values Int accepts: from 2^53 on, a float64
// no longer holds every integer, so the one written may have been rounded.
const maxExact = 1 << 53

// Object returns m[key] as an object. Absent or null is nil, with no error;
// any other type is an error naming Path(path, key).
func Object(m map[string]any, key, path string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, TypeError(Path(path, key), "object", v)
	}
	return out, nil
}

// List returns m[key] as a list. Absent or null is nil, with no error; any
// other type is an error naming Path(path, key).
func List(m map[string]any, key, path string) ([]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	out, ok := v.([]any)
	if !ok {
		return nil, TypeError(Path(path, key), "list", v)
	}
	return out, nil
}

// String returns m[key] as a string and whether it is set. Absent or null
// is ("", false) with no error, so an empty string that is written can be
// told from one that is not; any other type is an error naming
// Path(path, key).
func String(m map[string]any, key, path string) (string, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, TypeError(Path(path, key), "string", v)
	}
	return s, true, nil
}

// Int returns m[key] as an integer and whether it is set. Absent or null is
// (0, false) with no error. It accepts what Integer accepts, except a
// float64 of magnitude 2^53 or more, which JSON may have rounded; any other
// value, a fraction included, is an error naming Path(path, key).
func Int(m map[string]any, key, path string) (int64, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	if f, isFloat := v.(float64); !isFloat || math.Abs(f) < maxExact {
		if n, ok := Integer(v); ok {
			return n, true, nil
		}
	}
	return 0, false, TypeError(Path(path, key), "integer", v)
}

// Strings returns m[key] as a list of strings, such as a container's command
// or args. Absent or null is nil, with no error. A value that is not a list
// is an error naming Path(path, key); an element that is not a string is an
// error naming the element, e.g. "spec.args[2]".
func Strings(m map[string]any, key, path string) ([]string, error) {
	list, err := List(m, key, path)
	if err != nil || list == nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, el := range list {
		s, ok := el.(string)
		if !ok {
			return nil, TypeError(fmt.Sprintf("%s[%d]", Path(path, key), i), "string", el)
		}
		out[i] = s
	}
	return out, nil
}
