package fields

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// doc is the object the readers are tested on.
var doc = map[string]any{
	"obj":     map[string]any{"a": "b"},
	"list":    []any{"x", int64(1)},
	"strs":    []any{"a", "b"},
	"empty":   "",
	"str":     "s",
	"null":    nil,
	"bool":    true,
	"int":     int64(7),
	"int32":   int32(-2),
	"goint":   5,
	"float":   float64(4),
	"frac":    1.5,
	"big":     float64(1 << 60),
	"num":     float64(2),
	"inf":     math.Inf(1),
	"nan":     math.NaN(),
	"float32": float32(1),
}

func TestPath(t *testing.T) {
	tests := []struct{ parent, key, want string }{
		{"", "spec", "spec"},
		{"spec", "template", "spec.template"},
		{"spec.services", "Frontend", "spec.services.Frontend"},
		{"spec.services", "vllm-decode_2", "spec.services.vllm-decode_2"},
		{"spec.services", "odd.key", "spec.services[odd.key]"},
		{"metadata.annotations", "model.aibom.dev/name", "metadata.annotations[model.aibom.dev/name]"},
		{"spec.services", "has space", "spec.services[has space]"},
		{"spec.services", "-dash", "spec.services[-dash]"},
		{"spec.services", "", "spec.services[]"},
		{"", "a.b", "[a.b]"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Path(tt.parent, tt.key), "%q %q", tt.parent, tt.key)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"", "string"},
		{false, "boolean"},
		{int64(1), "number"},
		{1, "number"},
		{int32(1), "number"},
		{float32(1), "number"},
		{1.5, "number"},
		{[]any{}, "list"},
		{map[string]any{}, "object"},
		{[]string{}, "[]string"},
		{map[string]string{}, "map[string]string"},
		{struct{}{}, "struct {}"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Describe(tt.v), "%#v", tt.v)
	}
}

func TestTypeError(t *testing.T) {
	require.EqualError(t, TypeError("spec.roles[0]", "object", "x"), "spec.roles[0]: expected object, got string")
	require.EqualError(t, TypeError("spec", "list", nil), "spec: expected list, got null")
}

func TestInteger(t *testing.T) {
	tests := []struct {
		v    any
		want int64
		ok   bool
	}{
		{int64(7), 7, true},
		{int64(math.MinInt64), math.MinInt64, true},
		{7, 7, true},
		{int32(-2), -2, true},
		{float64(4), 4, true},
		{float64(-3), -3, true},
		{float64(1 << 60), 1 << 60, true},
		{-math.Pow(2, 63), math.MinInt64, true},
		{math.Pow(2, 63), 0, false},
		{1e19, 0, false},
		{1.5, 0, false},
		{math.Inf(1), 0, false},
		{math.Inf(-1), 0, false},
		{math.NaN(), 0, false},
		{float32(1), 0, false},
		{"7", 0, false},
		{true, 0, false},
		{nil, 0, false},
		{[]any{int64(1)}, 0, false},
	}
	for _, tt := range tests {
		n, ok := Integer(tt.v)
		require.Equal(t, tt.ok, ok, "%#v", tt.v)
		require.Equal(t, tt.want, n, "%#v", tt.v)
	}
}

func TestObject(t *testing.T) {
	tests := []struct {
		key, path string
		want      map[string]any
		err       string
	}{
		{"obj", "spec", map[string]any{"a": "b"}, ""},
		{"missing", "spec", nil, ""},
		{"null", "spec", nil, ""},
		{"str", "spec", nil, "spec.str: expected object, got string"},
		{"list", "", nil, "list: expected object, got list"},
		{"int", "spec", nil, "spec.int: expected object, got number"},
		{"bool", "spec", nil, "spec.bool: expected object, got boolean"},
	}
	for _, tt := range tests {
		got, err := Object(doc, tt.key, tt.path)
		check(t, tt.key, err, tt.err)
		require.Equal(t, tt.want, got, tt.key)
	}
	got, err := Object(nil, "obj", "spec")
	require.NoError(t, err)
	require.Nil(t, got)
}

func TestList(t *testing.T) {
	tests := []struct {
		key, path string
		want      []any
		err       string
	}{
		{"list", "spec", []any{"x", int64(1)}, ""},
		{"missing", "spec", nil, ""},
		{"null", "spec", nil, ""},
		{"obj", "spec.template.spec", nil, "spec.template.spec.obj: expected list, got object"},
		{"str", "", nil, "str: expected list, got string"},
		{"float", "spec", nil, "spec.float: expected list, got number"},
	}
	for _, tt := range tests {
		got, err := List(doc, tt.key, tt.path)
		check(t, tt.key, err, tt.err)
		require.Equal(t, tt.want, got, tt.key)
	}
	got, err := List(nil, "list", "spec")
	require.NoError(t, err)
	require.Nil(t, got)
}

func TestString(t *testing.T) {
	tests := []struct {
		key, path string
		want      string
		set       bool
		err       string
	}{
		{"str", "spec", "s", true, ""},
		{"empty", "spec", "", true, ""},
		{"missing", "spec", "", false, ""},
		{"null", "spec", "", false, ""},
		{"int", "spec.image", "", false, "spec.image.int: expected string, got number"},
		{"bool", "", "", false, "bool: expected string, got boolean"},
		{"obj", "spec", "", false, "spec.obj: expected string, got object"},
	}
	for _, tt := range tests {
		got, set, err := String(doc, tt.key, tt.path)
		check(t, tt.key, err, tt.err)
		require.Equal(t, tt.want, got, tt.key)
		require.Equal(t, tt.set, set, tt.key)
	}
	got, set, err := String(nil, "str", "spec")
	require.NoError(t, err)
	require.False(t, set)
	require.Empty(t, got)
}

func TestInt(t *testing.T) {
	tests := []struct {
		key  string
		want int64
		set  bool
		err  string
	}{
		{"int", 7, true, ""},
		{"int32", -2, true, ""},
		{"goint", 5, true, ""},
		{"float", 4, true, ""},
		{"missing", 0, false, ""},
		{"null", 0, false, ""},
		{"frac", 0, false, "spec.frac: expected integer, got number"},
		{"big", 0, false, "spec.big: expected integer, got number"},
		{"inf", 0, false, "spec.inf: expected integer, got number"},
		{"nan", 0, false, "spec.nan: expected integer, got number"},
		{"float32", 0, false, "spec.float32: expected integer, got number"},
		{"str", 0, false, "spec.str: expected integer, got string"},
		{"bool", 0, false, "spec.bool: expected integer, got boolean"},
		{"list", 0, false, "spec.list: expected integer, got list"},
	}
	for _, tt := range tests {
		got, set, err := Int(doc, tt.key, "spec")
		check(t, tt.key, err, tt.err)
		require.Equal(t, tt.want, got, tt.key)
		require.Equal(t, tt.set, set, tt.key)
	}
	got, set, err := Int(map[string]any{"n": float64(1<<53 - 1)}, "n", "")
	require.NoError(t, err)
	require.True(t, set)
	require.Equal(t, int64(1<<53-1), got)
	_, _, err = Int(map[string]any{"n": -float64(1 << 53)}, "n", "")
	require.EqualError(t, err, "n: expected integer, got number")
	_, set, err = Int(nil, "int", "spec")
	require.NoError(t, err)
	require.False(t, set)
}

func TestStrings(t *testing.T) {
	tests := []struct {
		key, path string
		want      []string
		err       string
	}{
		{"strs", "spec", []string{"a", "b"}, ""},
		{"missing", "spec", nil, ""},
		{"null", "spec", nil, ""},
		{"list", "spec.c", nil, "spec.c.list[1]: expected string, got number"},
		{"str", "spec", nil, "spec.str: expected list, got string"},
		{"obj", "", nil, "obj: expected list, got object"},
	}
	for _, tt := range tests {
		got, err := Strings(doc, tt.key, tt.path)
		check(t, tt.key, err, tt.err)
		require.Equal(t, tt.want, got, tt.key)
	}
	got, err := Strings(map[string]any{"args": []any{}}, "args", "")
	require.NoError(t, err)
	require.Equal(t, []string{}, got)
	_, err = Strings(map[string]any{"args": []any{nil}}, "args", "spec")
	require.EqualError(t, err, "spec.args[0]: expected string, got null")
}

// check asserts err is nil when want is empty, and reads want otherwise.
func check(t *testing.T, name string, err error, want string) {
	t.Helper()
	if want == "" {
		require.NoError(t, err, name)
		return
	}
	require.EqualError(t, err, want, name)
}
