package dynamo

import (
	"fmt"
	"math"
	"regexp"
)

// The accessors below read one field of an unstructured object. An absent
// or null field is "not set", never an error; a field of the wrong type is
// an error naming its locator.

// at is the locator of key in the object located at path.
func at(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// plainKey matches map keys that can be written after a dot in a locator.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// keyAt is the locator of a map entry: "spec.services.Frontend" for a plain
// key, "spec.services[odd.key]" for a key holding dots, spaces or other
// characters that would make the dotted form ambiguous.
func keyAt(path, key string) string {
	if plainKey.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + key + "]"
}

func objectAt(m map[string]any, key, path string) (map[string]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: expected object, got %s", at(path, key), describe(v))
	}
	return out, nil
}

func listAt(m map[string]any, key, path string) ([]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	out, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: expected list, got %s", at(path, key), describe(v))
	}
	return out, nil
}

func stringAt(m map[string]any, key, path string) (string, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, fmt.Errorf("%s: expected string, got %s", at(path, key), describe(v))
	}
	return s, true, nil
}

func intAt(m map[string]any, key, path string) (int64, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	switch n := v.(type) {
	case int64:
		return n, true, nil
	case int:
		return int64(n), true, nil
	case int32:
		return int64(n), true, nil
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true, nil
		}
	}
	return 0, false, fmt.Errorf("%s: expected integer, got %s", at(path, key), describe(v))
}

// stringsAt reads a list of strings (a container's command or args).
func stringsAt(m map[string]any, key, path string) ([]string, error) {
	list, err := listAt(m, key, path)
	if err != nil || list == nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, el := range list {
		s, ok := el.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: expected string, got %s", at(path, key), i, describe(el))
		}
		out[i] = s
	}
	return out, nil
}

// describe names the JSON type of an unstructured value.
func describe(v any) string {
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
