package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// names returns "name@position" for each source.
func names(srcs []Source) []string {
	var out []string
	for _, s := range srcs {
		out = append(out, s.Object.GetName()+"@"+s.Position())
	}
	return out
}

// Streams as people write them: every object is read, at its line.
func TestDecodeStreams(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"separator with a comment", // was a silent loss: the second object vanished
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # second deployment\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
			[]string{"a@f:1", "b@f:5"}},
		{"leading and repeated separators",
			"---\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\n\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n",
			[]string{"a@f:5", "b@f:11"}},
		{"no final newline",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}",
			[]string{"a@f:1", "b@f:5"}},
		{"CRLF line ends",
			"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: a}\r\n--- # x\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: b}\r\n",
			[]string{"a@f:1", "b@f:5"}},
		{"two JSON objects on separate lines", // was a silent loss: only the first was read
			"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"b\"}}\n",
			[]string{"a@f:1", "b@f:2"}},
		{"two JSON objects on one line",
			`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}`,
			[]string{"a@f:1", "b@f:1"}},
		{"JSON indented over lines",
			"\n\n{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\"name\": \"a\"}\n}\n\n{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}]\n}\n",
			[]string{"a@f:3", "b@f:9 (items[0])"}},
		{"YAML flow mapping is not JSON",
			"{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
			[]string{"a@f:1", "b@f:3"}},
		{"empty", "", nil},
		{"comments only", "# nothing\n---\n# here\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srcs, err := DecodeSources("f", []byte(tc.data))
			require.NoError(t, err)
			require.Equal(t, tc.want, names(srcs))
		})
	}
}

// Malformed streams are errors naming the file and line, never a silent drop.
func TestDecodeStreamErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"JSON object then garbage",
			"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}\n\n{\"apiVersion\": \"v1\",, }\n",
			`^f:3: invalid character ','`},
		{"JSON then YAML",
			"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}\n---\napiVersion: v1\n",
			`^f:2: `},
		{"content after a separator",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- {x: y}\n",
			`^f:4: invalid Yaml document separator`},
		{"malformed second document",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # b\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [b\n",
			`^f:8: .*yaml: line 8:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSources("f", []byte(tc.data))
			require.Error(t, err)
			require.Regexp(t, tc.want, err.Error())
		})
	}
}

// ReadFiles reads standard input for "-", walks folders recursively with
// Recursive, and reports a file it cannot decode without losing the others.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n" }
	write("a.yaml", cm("a"))
	bad := write("b.yaml", cm("b")+"---\nkind: [\n")
	write("notes.txt", "not a manifest")
	write("sub/c.json", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`)
	write("sub/deeper/d.yml", cm("d"))

	flat, err := ReadFiles(ReadOptions{}, dir)
	require.NoError(t, err)
	require.Len(t, flat, 2, "not recursive by default")
	require.Equal(t, []string{"a@" + filepath.Join(dir, "a.yaml") + ":1"}, names(flat[0].Sources))
	require.Empty(t, flat[1].Sources, "a file with an error gives no object")
	require.ErrorContains(t, flat[1].Err, bad+":5: ")

	deep, err := ReadFiles(ReadOptions{Recursive: true, Stdin: strings.NewReader(cm("in") + "--- # more\n" + cm("in2"))}, dir, Stdin)
	require.NoError(t, err)
	var got []string
	for _, f := range deep {
		got = append(got, names(f.Sources)...)
	}
	require.Equal(t, []string{
		"a@" + filepath.Join(dir, "a.yaml") + ":1",
		"c@" + filepath.Join(dir, "sub", "c.json") + ":1",
		"d@" + filepath.Join(dir, "sub", "deeper", "d.yml") + ":1",
		"in@<stdin>:1", "in2@<stdin>:5",
	}, got)

	_, err = ReadFiles(ReadOptions{Stdin: strings.NewReader("")}, Stdin, Stdin)
	require.ErrorContains(t, err, "standard input is read once")

	_, err = ReadFiles(ReadOptions{}, filepath.Join(dir, "missing.yaml"))
	require.ErrorContains(t, err, "missing.yaml")

	// Standard input is bounded like a file.
	files, err := ReadFiles(ReadOptions{Limits: Limits{MaxFileBytes: 16}, Stdin: strings.NewReader(cm("big"))}, Stdin)
	require.NoError(t, err)
	require.ErrorIs(t, files[0].Err, ErrLimit)
}

// A JSON list is decoded item by item, each handed to ReadOptions.Each as
// soon as it is decoded (in order, with its index), and what Each returns
// is kept; a list without its own apiVersion and kind is refused as before,
// and an error from Each fails the file.
func TestJSONListItemsGoThroughEachOneByOne(t *testing.T) {
	dir := t.TempDir()
	list := `{"apiVersion":"v1","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}],"kind":"List"}`
	p := filepath.Join(dir, "l.json")
	require.NoError(t, os.WriteFile(p, []byte(list), 0o644))
	var seen []string
	files, err := ReadFiles(ReadOptions{Each: func(s Source) (Source, error) {
		seen = append(seen, fmt.Sprintf("%s#%d", s.Object.GetName(), s.Item))
		s.Object.SetLabels(map[string]string{"kept": "yes"})
		return s, nil
	}}, p)
	require.NoError(t, err)
	require.NoError(t, files[0].Err)
	require.Equal(t, []string{"a#0", "b#1"}, seen)
	require.Len(t, files[0].Sources, 2)
	require.Equal(t, "yes", files[0].Sources[1].Object.GetLabels()["kept"])

	untyped := filepath.Join(dir, "u.json")
	require.NoError(t, os.WriteFile(untyped, []byte(`{"items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]}`), 0o644))
	files, err = ReadFiles(ReadOptions{}, untyped)
	require.NoError(t, err)
	require.ErrorContains(t, files[0].Err, "object without apiVersion or kind")

	files, err = ReadFiles(ReadOptions{Each: func(s Source) (Source, error) { return s, fmt.Errorf("refused %s", s.Object.GetName()) }}, p)
	require.NoError(t, err)
	require.ErrorContains(t, files[0].Err, "refused a")
	require.Empty(t, files[0].Sources)
}
