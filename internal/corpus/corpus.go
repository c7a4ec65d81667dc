// Package corpus scores the scanner against a folder of real manifests and a
// table of what a careful reader names in each: the serving runtime and the
// model. It backs `make corpus`.
//
// The table (expected.tsv) has a header line and five tab-separated columns:
// manifest (a path relative to the folder), root kind, expected runtime,
// expected model and source. A value of "-" (or one that starts with "-" or
// "(") means none; "a+b" accepts either spelling; text in brackets is a
// note, not part of the value.
package corpus

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
)

// Entry is one line of expected.tsv.
type Entry struct {
	// Manifest is the file, relative to the corpus folder.
	Manifest string
	// Kind is the root kind as written in the table ("DGD" and "DCD" are
	// expanded, a version suffix such as "DGD v1beta1" dropped).
	Kind string
	// Runtimes holds the accepted spellings of the runtime; empty for none.
	Runtimes []string
	// Models holds the accepted spellings of the model; empty for none.
	Models []string
	// RawRuntime and RawModel are the columns as written, notes included.
	RawRuntime, RawModel string
}

var kindAbbrev = map[string]string{
	"DGD": "DynamoGraphDeployment",
	"DCD": "DynamoComponentDeployment",
}

// ParseExpected reads expected.tsv.
func ParseExpected(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if line == 1 || strings.TrimSpace(text) == "" {
			continue // header
		}
		cols := strings.Split(text, "\t")
		if len(cols) < 4 {
			return nil, fmt.Errorf("expected.tsv:%d: %d columns, want at least 4", line, len(cols))
		}
		kind := strings.Fields(cols[1])
		if len(kind) == 0 {
			return nil, fmt.Errorf("expected.tsv:%d: empty kind", line)
		}
		k := kind[0]
		if full, ok := kindAbbrev[k]; ok {
			k = full
		}
		out = append(out, Entry{
			Manifest: cols[0], Kind: k,
			Runtimes: Values(cols[2]), Models: Values(cols[3]),
			RawRuntime: cols[2], RawModel: cols[3],
		})
	}
	return out, sc.Err()
}

var bracketNote = regexp.MustCompile(`\([^()]*\)`)

// Values returns the accepted spellings of a table cell: notes in brackets
// removed, "a+b" split, "-" or an empty remainder meaning none.
func Values(cell string) []string {
	c := strings.TrimSpace(cell)
	if c == "" || strings.HasPrefix(c, "-") || strings.HasPrefix(c, "(") {
		return nil
	}
	for {
		stripped := bracketNote.ReplaceAllString(c, "")
		if stripped == c {
			break
		}
		c = stripped
	}
	c = strings.TrimSpace(c)
	if c == "" || c == "-" {
		return nil
	}
	var out []string
	for _, alt := range strings.Split(c, "+") {
		if alt = strings.TrimSpace(alt); alt != "" {
			out = append(out, alt)
		}
	}
	return out
}

// Found is what the scanner named for one manifest, over all its documents.
type Found struct {
	Runtimes []string
	Models   []string
}

// MatchRuntime reports whether one of the found runtime names is one of the
// accepted spellings (case and the separators " ", "-", "_" and "." aside).
func MatchRuntime(accepted, found []string) bool {
	for _, a := range accepted {
		for _, f := range found {
			if normRuntime(a) == normRuntime(f) {
				return true
			}
		}
	}
	return false
}

func normRuntime(s string) string {
	return strings.NewReplacer(" ", "", "-", "", "_", "", ".", "").Replace(strings.ToLower(s))
}

// MatchModel reports whether one of the found model names names one of the
// accepted models: equal ignoring case, a storage scheme and trailing
// slashes, or, when the accepted spelling has no organisation ("DeepSeek-R1"),
// equal to the last path segment of a found name.
func MatchModel(accepted, found []string) bool {
	for _, a := range accepted {
		na := normModel(a)
		for _, f := range found {
			nf := normModel(f)
			if na == nf {
				return true
			}
			if !strings.Contains(na, "/") && path.Base(nf) == na {
				return true
			}
		}
	}
	return false
}

func normModel(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	s = strings.Join(strings.Fields(s), "-")
	return strings.TrimRight(s, "/")
}
