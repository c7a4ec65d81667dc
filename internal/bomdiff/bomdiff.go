// Package bomdiff compares two sets of AIBOM documents (two files, two
// "aibom scan --out-dir" folders, or a folder and a fresh scan) workload by
// workload: the models, runtimes, images and digests each one added,
// removed or changed. It reads the documents only, so it compares what
// the controller and the scanner wrote, whichever wrote them.
package bomdiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// MaxFileBytes bounds one document file read.
const MaxFileBytes = 64 << 20

// Facts are what one workload's document says, compared key by key: the
// value of a key is what may change.
type Facts struct {
	// Models: model name -> versions.
	Models map[string]string
	// Runtimes: runtime or platform name -> versions.
	Runtimes map[string]string
	// Images: image repository -> tags.
	Images map[string]string
	// Digests: image reference (repository:tag) -> digests it is pinned
	// to or seen running with ("unresolved" when none).
	Digests map[string]string
}

// Workload is one document's subject and facts.
type Workload struct {
	// Ref is the subject's bom-ref: the identity compared.
	Ref                          string
	Kind, Group, Namespace, Name string
	Facts                        Facts
	// Source is where the document was read ("file", "file[2]").
	Source string
}

// Title is "Kind.group namespace/name".
func (w Workload) Title() string {
	k := w.Kind
	if w.Group != "" {
		k += "." + w.Group
	}
	if w.Namespace == "" {
		return k + " " + w.Name
	}
	return k + " " + w.Namespace + "/" + w.Name
}

// bom is the part of a CycloneDX document the diff reads.
type bom struct {
	BOMFormat string `json:"bomFormat"`
	Metadata  struct {
		Component struct {
			Ref        string     `json:"bom-ref"`
			Name       string     `json:"name"`
			Properties []property `json:"properties"`
		} `json:"component"`
	} `json:"metadata"`
	Components []struct {
		Type    string `json:"type"`
		Name    string `json:"name"`
		Version string `json:"version"`
		Hashes  []struct {
			Alg     string `json:"alg"`
			Content string `json:"content"`
		} `json:"hashes"`
		Properties []property `json:"properties"`
	} `json:"components"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Parse reads the documents of data: one CycloneDX JSON document, or an
// array of them ("aibom scan -o json"), in JSON or YAML. source names data
// in errors.
func Parse(source string, data []byte) ([]Workload, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] != '{' && trimmed[0] != '[' {
		j, err := yaml.YAMLToJSON(trimmed)
		if err != nil {
			return nil, fmt.Errorf("%s: neither JSON nor YAML: %w", source, err)
		}
		trimmed = bytes.TrimSpace(j)
	}
	var docs []bom
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &docs); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	} else {
		var d bom
		if err := json.Unmarshal(trimmed, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		docs = []bom{d}
	}
	out := make([]Workload, 0, len(docs))
	for i, d := range docs {
		where := source
		if len(docs) > 1 || trimmed[0] == '[' {
			where = fmt.Sprintf("%s[%d]", source, i)
		}
		w, err := workload(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		w.Source = where
		out = append(out, w)
	}
	return out, nil
}

func workload(d bom) (Workload, error) {
	if d.BOMFormat != "CycloneDX" {
		return Workload{}, errors.New("not a CycloneDX document (bomFormat is not \"CycloneDX\")")
	}
	subject := d.Metadata.Component
	if subject.Ref == "" {
		return Workload{}, errors.New("the document names no subject (metadata.component.bom-ref)")
	}
	w := Workload{Ref: subject.Ref, Name: subject.Name, Facts: Facts{
		Models: map[string]string{}, Runtimes: map[string]string{}, Images: map[string]string{}, Digests: map[string]string{},
	}}
	for _, p := range subject.Properties {
		switch p.Name {
		case "aibom.workload.kind":
			w.Kind = p.Value
		case "aibom.workload.group":
			w.Group = p.Value
		case "aibom.workload.namespace":
			w.Namespace = p.Value
		case "aibom.workload.name":
			w.Name = p.Value
		}
	}
	models, runtimes, images, digests := multi{}, multi{}, multi{}, multi{}
	for _, c := range d.Components {
		switch c.Type {
		case "machine-learning-model":
			models.add(c.Name, c.Version)
		case "application", "platform":
			runtimes.add(c.Name, c.Version)
		case "container":
			images.add(c.Name, c.Version)
			ref := c.Name
			if c.Version != "" {
				ref += ":" + c.Version
			}
			digests.add(ref, "")
			for _, h := range c.Hashes {
				if h.Alg == "SHA-256" && h.Content != "" {
					digests.add(ref, "sha256:"+h.Content)
				}
			}
			for _, p := range c.Properties {
				// Other running digests; "aibom.digest.running." is how
				// documents before 0.2 listed every one.
				if (strings.HasPrefix(p.Name, "aibom.digest.other.") || strings.HasPrefix(p.Name, "aibom.digest.running.")) &&
					!strings.HasSuffix(p.Name, ".pods") && !strings.HasSuffix(p.Name, ".omitted") {
					digests.add(ref, p.Value)
				}
			}
		}
	}
	w.Facts.Models, w.Facts.Runtimes, w.Facts.Images = models.values(""), runtimes.values(""), images.values("")
	w.Facts.Digests = digests.values("unresolved")
	return w, nil
}

// multi collects the distinct values of each key.
type multi map[string]map[string]bool

func (m multi) add(key, value string) {
	if m[key] == nil {
		m[key] = map[string]bool{}
	}
	if value != "" {
		m[key][value] = true
	}
}

// values joins each key's sorted values with ", " (none: empty).
func (m multi) values(none string) map[string]string {
	out := make(map[string]string, len(m))
	for k, vs := range m {
		list := make([]string, 0, len(vs))
		for v := range vs {
			list = append(list, v)
		}
		sort.Strings(list)
		out[k] = strings.Join(list, ", ")
		if len(list) == 0 {
			out[k] = none
		}
	}
	return out
}

// Load reads one side: a document file (a BOM or an array of them, JSON or
// YAML), a folder of them (its *.json, *.yaml and *.yml files, as "aibom
// scan --out-dir" writes them), or "-" for stdin. The same workload twice
// on one side is an error naming both places.
func Load(path string, stdin io.Reader) ([]Workload, error) {
	var all []Workload
	if path == "-" {
		data, err := readBounded(stdin, "<stdin>")
		if err != nil {
			return nil, err
		}
		w, err := Parse("<stdin>", data)
		if err != nil {
			return nil, err
		}
		all = w
	} else {
		files := []string{path}
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if info.IsDir() {
			entries, err := os.ReadDir(path)
			if err != nil {
				return nil, err
			}
			files = files[:0]
			for _, e := range entries {
				switch filepath.Ext(e.Name()) {
				case ".json", ".yaml", ".yml":
					if e.Type().IsRegular() {
						files = append(files, filepath.Join(path, e.Name()))
					}
				}
			}
		}
		for _, f := range files {
			data, err := readFile(f)
			if err != nil {
				return nil, err
			}
			w, err := Parse(f, data)
			if err != nil {
				return nil, err
			}
			all = append(all, w...)
		}
	}
	seen := map[string]string{}
	for _, w := range all {
		if prev, dup := seen[w.Ref]; dup {
			return nil, fmt.Errorf("%s is described twice, in %s and in %s", w.Title(), prev, w.Source)
		}
		seen[w.Ref] = w.Source
	}
	return all, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return readBounded(f, path)
}

func readBounded(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: over the limit of %d bytes", name, MaxFileBytes)
	}
	return data, nil
}
