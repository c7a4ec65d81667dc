//go:build qualify

package operators

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// cdxComponent is the part of a CycloneDX component the suite reads.
type cdxComponent struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Hashes  []struct {
		Content string `json:"content"`
	} `json:"hashes"`
	Properties []cdxProperty  `json:"properties"`
	Components []cdxComponent `json:"components"`
}

type cdxProperty struct{ Name, Value string }

// view is what a user reads in a workload's document: the components by
// type (name, or name@version), and each container image's running
// digests with their pod counts.
type view struct {
	Applications []string // type application or platform
	Frameworks   []string
	Models       []string
	Data         []string
	// Running maps "<container component name>" to "sha256:<hex>=<pods>"
	// entries, most pods first.
	Running map[string][]string
}

func documentView(a *v1alpha1.AIBOM) (view, error) {
	var doc struct {
		Components []cdxComponent `json:"components"`
	}
	if a.Status.Document == "" {
		return view{}, fmt.Errorf("AIBOM %s has no inline document", a.Name)
	}
	if err := json.Unmarshal([]byte(a.Status.Document), &doc); err != nil {
		return view{}, fmt.Errorf("AIBOM %s: %w", a.Name, err)
	}
	v := view{Running: map[string][]string{}}
	var walk func([]cdxComponent)
	walk = func(cs []cdxComponent) {
		for _, c := range cs {
			name := c.Name
			if c.Version != "" {
				name += "@" + c.Version
			}
			switch c.Type {
			case "application", "platform":
				v.Applications = append(v.Applications, name)
			case "framework":
				v.Frameworks = append(v.Frameworks, name)
			case "machine-learning-model":
				v.Models = append(v.Models, name)
			case "data":
				v.Data = append(v.Data, name)
			case "container":
				props := map[string]string{}
				for _, p := range c.Properties {
					props[p.Name] = p.Value
				}
				// The hash's pods, then every other digest running.
				if n, ok := props["aibom.digest.pods"]; ok && len(c.Hashes) > 0 {
					v.Running[c.Name] = append(v.Running[c.Name], "sha256:"+c.Hashes[0].Content+"="+n)
				}
				for i := 0; ; i++ {
					d, ok := props["aibom.digest.other."+strconv.Itoa(i)]
					if !ok {
						break
					}
					v.Running[c.Name] = append(v.Running[c.Name], d+"="+props["aibom.digest.other."+strconv.Itoa(i)+".pods"])
				}
			}
			walk(c.Components)
		}
	}
	walk(doc.Components)
	for _, l := range [][]string{v.Applications, v.Frameworks, v.Models, v.Data} {
		sort.Strings(l)
	}
	v.Applications, v.Frameworks, v.Models, v.Data = slices.Compact(v.Applications), slices.Compact(v.Frameworks), slices.Compact(v.Models), slices.Compact(v.Data)
	return v, nil
}

// String prints a view in one line per kind of component.
func (v view) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "applications=%v frameworks=%v models=%v data=%v running=", v.Applications, v.Frameworks, v.Models, v.Data)
	keys := make([]string, 0, len(v.Running))
	for k := range v.Running {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s:%v ", k, v.Running[k])
	}
	return b.String()
}

// baseName strips "@version" from a component name.
func baseName(s string) string {
	if i := strings.LastIndex(s, "@"); i > 0 {
		return s[:i]
	}
	return s
}

func names(l []string) []string {
	out := make([]string, 0, len(l))
	for _, s := range l {
		out = append(out, baseName(s))
	}
	return out
}
