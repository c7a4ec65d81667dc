package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/internal/cli"
	"github.com/aibom-dev/aibom/internal/manifest"
)

// Result is the outcome for one manifest.
type Result struct {
	Entry
	// Known is true when an enabled adapter tracks the root kind.
	Known bool
	// Exit is the scanner's exit code; Stderr what it printed there.
	Exit   int
	Stderr string
	Found  Found
	// RuntimeOK and ModelOK say whether the expected value was found; they
	// are true when nothing is expected.
	RuntimeOK, ModelOK bool
}

// Score counts expected runtimes and models and how many were found.
type Score struct {
	Runtimes, RuntimesWant int
	Models, ModelsWant     int
}

func (s *Score) add(r Result) {
	if len(r.Runtimes) > 0 {
		s.RuntimesWant++
		if r.RuntimeOK {
			s.Runtimes++
		}
	}
	if len(r.Models) > 0 {
		s.ModelsWant++
		if r.ModelOK {
			s.Models++
		}
	}
}

// String is "runtimes N/M models N/M".
func (s Score) String() string {
	return fmt.Sprintf("runtimes %d/%d models %d/%d", s.Runtimes, s.RuntimesWant, s.Models, s.ModelsWant)
}

// Ratios returns the found fractions (1 when nothing is expected).
func (s Score) Ratios() (runtimes, models float64) {
	runtimes, models = 1, 1
	if s.RuntimesWant > 0 {
		runtimes = float64(s.Runtimes) / float64(s.RuntimesWant)
	}
	if s.ModelsWant > 0 {
		models = float64(s.Models) / float64(s.ModelsWant)
	}
	return runtimes, models
}

// Options configure Run.
type Options struct {
	// Dir is the corpus folder holding expected.tsv.
	Dir string
	// Tracked reports whether an enabled adapter tracks a group and kind
	// (or reads it as a referenced kind).
	Tracked func(gk schema.GroupKind) bool
	// ScanArgs are extra arguments for "aibom scan" (e.g. --adapters).
	ScanArgs []string
}

// Run scans every manifest of the corpus with "aibom scan -o json" and
// scores what it names against expected.tsv.
func Run(ctx context.Context, opts Options) ([]Result, error) {
	st, err := os.Stat(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("corpus folder: %w (set CORPUS to the folder holding expected.tsv)", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("corpus folder %s is not a directory", opts.Dir)
	}
	f, err := os.Open(filepath.Join(opts.Dir, "expected.tsv"))
	if err != nil {
		return nil, fmt.Errorf("corpus folder %s: %w", opts.Dir, err)
	}
	entries, err := ParseExpected(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, e := range entries {
		r := Result{Entry: e, Known: knownKind(filepath.Join(opts.Dir, e.Manifest), e.Kind, opts.Tracked)}
		var stdout, stderr bytes.Buffer
		args := append([]string{"scan", "-f", filepath.Join(opts.Dir, e.Manifest), "-o", "json"}, opts.ScanArgs...)
		r.Exit = cli.Run(ctx, args, &stdout, &stderr)
		r.Stderr = stderr.String()
		if r.Exit == cli.ExitOK || r.Exit == cli.ExitPartial {
			found, err := ReadDocuments(stdout.Bytes())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", e.Manifest, err)
			}
			r.Found = found
		}
		r.RuntimeOK = len(e.Runtimes) == 0 || MatchRuntime(e.Runtimes, r.Found.Runtimes)
		r.ModelOK = len(e.Models) == 0 || MatchModel(e.Models, r.Found.Models)
		out = append(out, r)
	}
	return out, nil
}

// knownKind reports whether the manifest holds an object of the expected
// root kind whose group an enabled adapter tracks (a Volcano "Job" is not a
// batch/v1 Job). A manifest that does not load counts by kind name alone.
func knownKind(file, kind string, tracked func(schema.GroupKind) bool) bool {
	objs, err := manifest.Load(file)
	if err != nil {
		return false
	}
	for _, o := range objs {
		gk := o.GroupVersionKind().GroupKind()
		if gk.Kind == kind && tracked(gk) {
			return true
		}
	}
	return false
}

type bom struct {
	Components []struct {
		Type    string `json:"type"`
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"components"`
}

// ReadDocuments reads the JSON "aibom scan -o json" prints (one document or
// an array of them) and collects the runtime and platform names and the
// model names, sorted and distinct.
func ReadDocuments(data []byte) (Found, error) {
	data = bytes.TrimSpace(data)
	var docs []bom
	switch {
	case len(data) == 0:
	case data[0] == '[':
		if err := json.Unmarshal(data, &docs); err != nil {
			return Found{}, fmt.Errorf("reading documents: %w", err)
		}
	default:
		var d bom
		if err := json.Unmarshal(data, &d); err != nil {
			return Found{}, fmt.Errorf("reading document: %w", err)
		}
		docs = append(docs, d)
	}
	rt, md := map[string]bool{}, map[string]bool{}
	for _, d := range docs {
		for _, c := range d.Components {
			switch c.Type {
			case "application", "platform":
				rt[c.Name] = true
			case "machine-learning-model":
				md[c.Name] = true
				if c.Version != "" {
					md[c.Name+":"+c.Version] = true
				}
			}
		}
	}
	return Found{Runtimes: keys(rt), Models: keys(md)}, nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Report prints one line per manifest and the two closing lines; it returns
// the scores over known kinds and over all manifests.
func Report(w io.Writer, results []Result) (known, all Score) {
	unknown := map[string]int{}
	for _, r := range results {
		mark := func(ok bool) string {
			if ok {
				return "ok  "
			}
			return "MISS"
		}
		scope := "known"
		if !r.Known {
			scope = "unknown-kind"
			unknown[r.Kind]++
		}
		fmt.Fprintf(w, "%s %s  %s  [%s, exit %d]\n", mark(r.RuntimeOK), mark(r.ModelOK), r.Manifest, scope, r.Exit)
		fmt.Fprintf(w, "    runtime: want %s found %s\n", orNone(r.Runtimes), orNone(r.Found.Runtimes))
		fmt.Fprintf(w, "    model:   want %s found %s\n", orNone(r.Models), orNone(r.Found.Models))
		if r.Exit != cli.ExitOK {
			for _, l := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
				fmt.Fprintf(w, "    stderr: %s\n", l)
			}
		}
		all.add(r)
		if r.Known {
			known.add(r)
		}
	}
	var kinds []string
	for k, n := range unknown {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "known kinds (%d manifests): %s\n", countKnown(results), known)
	fmt.Fprintf(w, "all manifests (%d): %s; unknown kinds: %s\n", len(results), all, strings.Join(kinds, ", "))
	return known, all
}

func countKnown(results []Result) int {
	n := 0
	for _, r := range results {
		if r.Known {
			n++
		}
	}
	return n
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return strings.Join(list, " | ")
}
