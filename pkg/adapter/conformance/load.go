package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// DecodeObject decodes one YAML or JSON manifest the way the core receives
// objects from the API server: JSON numbers become int64 (or float64 when
// they are not integers).
func DecodeObject(doc []byte) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("conformance: decode manifest: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("conformance: decode manifest: %w", err)
	}
	return u, nil
}

// LoadFixtures reads every manifest matching a glob ("testdata/*.yaml"), in
// name order, as fixtures named after their file without extension, and
// attaches expect[name] to each: testdata/llama.yaml is "llama". An expect
// entry that names no file is an error, so that expectations do not
// silently stop applying. Expect.WantErr marks a file malformed on purpose.
func LoadFixtures(glob string, expect map[string]Expect) ([]Fixture, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	sort.Strings(files)
	var out []Fixture
	used := map[string]bool{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("conformance: %w", err)
		}
		obj, err := DecodeObject(b)
		if err != nil {
			return nil, fmt.Errorf("conformance: %s: %w", file, err)
		}
		name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		used[name] = true
		out = append(out, Fixture{Name: name, Object: obj, Expect: expect[name], WantErr: expect[name].WantErr})
	}
	var unknown []string
	for name := range expect {
		if !used[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		for _, name := range unknown {
			if base := strings.TrimSuffix(name, filepath.Ext(name)); base != name && used[base] {
				return nil, fmt.Errorf("conformance: expectations for %q match no file of %s: expectations are keyed by file name without extension (%q)", unknown, glob, base)
			}
		}
		return nil, fmt.Errorf("conformance: expectations for %q match no file of %s", unknown, glob)
	}
	return out, nil
}
