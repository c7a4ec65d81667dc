package bomdiff

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/aibom-dev/aibom/internal/scan"
)

// Status of a workload or of one of its facts.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Change is one fact that differs: From is empty when it was added, To
// when it was removed.
type Change struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
}

// WorkloadDiff is what differs for one workload.
type WorkloadDiff struct {
	// Workload is "Kind.group namespace/name".
	Workload  string   `json:"workload"`
	Kind      string   `json:"kind"`
	Group     string   `json:"group,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name"`
	Status    string   `json:"status"`
	Models    []Change `json:"models,omitempty"`
	Runtimes  []Change `json:"runtimes,omitempty"`
	Images    []Change `json:"images,omitempty"`
	Digests   []Change `json:"digests,omitempty"`
}

// Result is the comparison of two sides.
type Result struct {
	// Different is true when some workload differs.
	Different bool `json:"different"`
	// Workloads are those that differ, sorted by namespace, kind, name.
	Workloads []WorkloadDiff `json:"workloads"`
}

// Diff compares side a (before) with side b (after). A workload only in b
// is added (all its facts added), only in a removed; one in both is
// changed when a model, runtime, image or digest differs. Any other
// difference between the documents (evidence, properties) is not one.
func Diff(a, b []Workload) Result {
	byRef := func(ws []Workload) map[string]Workload {
		m := make(map[string]Workload, len(ws))
		for _, w := range ws {
			m[w.Ref] = w
		}
		return m
	}
	am, bm := byRef(a), byRef(b)
	refs := map[string]bool{}
	for r := range am {
		refs[r] = true
	}
	for r := range bm {
		refs[r] = true
	}
	res := Result{Workloads: []WorkloadDiff{}}
	empty := Workload{}
	for ref := range refs {
		before, inA := am[ref]
		after, inB := bm[ref]
		d := WorkloadDiff{Status: Changed}
		id := after
		switch {
		case !inA:
			d.Status, before = Added, empty
		case !inB:
			d.Status, after, id = Removed, empty, before
		}
		d.Workload, d.Kind, d.Group, d.Namespace, d.Name = id.Title(), id.Kind, id.Group, id.Namespace, id.Name
		d.Models = compare(before.Facts.Models, after.Facts.Models)
		d.Runtimes = compare(before.Facts.Runtimes, after.Facts.Runtimes)
		d.Images = compare(before.Facts.Images, after.Facts.Images)
		d.Digests = compare(before.Facts.Digests, after.Facts.Digests)
		if d.Status == Changed && len(d.Models)+len(d.Runtimes)+len(d.Images)+len(d.Digests) == 0 {
			continue
		}
		res.Workloads = append(res.Workloads, d)
	}
	sort.Slice(res.Workloads, func(i, j int) bool {
		x, y := res.Workloads[i], res.Workloads[j]
		if x.Namespace != y.Namespace {
			return x.Namespace < y.Namespace
		}
		if x.Kind != y.Kind {
			return x.Kind < y.Kind
		}
		if x.Group != y.Group {
			return x.Group < y.Group
		}
		return x.Name < y.Name
	})
	res.Different = len(res.Workloads) > 0
	return res
}

// compare lists the keys added, removed or whose value changed, by key.
func compare(a, b map[string]string) []Change {
	var out []Change
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok:
			out = append(out, Change{Name: k, Status: Removed, From: va})
		case va != vb:
			out = append(out, Change{Name: k, Status: Changed, From: va, To: vb})
		}
	}
	for k, vb := range b {
		if _, ok := a[k]; !ok {
			out = append(out, Change{Name: k, Status: Added, To: vb})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WriteJSON prints the result as indented JSON.
func WriteJSON(w io.Writer, r Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

var marks = map[string]string{Added: "+", Removed: "-", Changed: "~"}

// WriteText prints one line per workload that differs ("~ Kind.group
// namespace/name") and, under it, one line per fact ("  + model NAME",
// "  ~ digest IMAGE: FROM -> TO"). Nothing when nothing differs. Values
// are escaped (scan.Printable).
func WriteText(w io.Writer, r Result) error {
	for _, d := range r.Workloads {
		if _, err := fmt.Fprintf(w, "%s %s\n", marks[d.Status], scan.Printable(d.Workload)); err != nil {
			return err
		}
		for _, s := range []struct {
			what    string
			changes []Change
		}{{"model", d.Models}, {"runtime", d.Runtimes}, {"image", d.Images}, {"digest", d.Digests}} {
			for _, c := range s.changes {
				line := fmt.Sprintf("  %s %s %s", marks[c.Status], s.what, c.Name)
				switch c.Status {
				case Added:
					line += suffix(c.To)
				case Removed:
					line += suffix(c.From)
				case Changed:
					line += ": " + dash(c.From) + " -> " + dash(c.To)
				}
				if _, err := fmt.Fprintln(w, scan.Printable(line)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func suffix(v string) string {
	if v == "" {
		return ""
	}
	return " (" + v + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
