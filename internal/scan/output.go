package scan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

// WriteTable prints one line per root: namespace, kind, name, runtime,
// models, absorbed workloads and resolved digests (resolved/containers). A
// root without a document shows "-" and "error" in the digests column.
func WriteTable(w io.Writer, roots []Root) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tKIND\tNAME\tRUNTIME\tMODELS\tABSORBED\tDIGESTS")
	for _, r := range roots {
		s := r.Report.Status
		digests := "error"
		if r.Document() != "" {
			resolved, total := r.Digests()
			digests = fmt.Sprintf("%d/%d", resolved, total)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Object.GetNamespace(), r.Entry.Kind.Kind, r.Object.GetName(),
			dash(s.Summary.Runtime), dash(strings.Join(s.Summary.Models, ",")), dash(strings.Join(s.Absorbed, ",")), digests)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteJSON prints the documents: the document itself, byte for byte as the
// controller writes it to status.document, when there is exactly one root
// with a document; otherwise (none, or several) a JSON array of the
// documents, in root order, indented by two spaces.
func WriteJSON(w io.Writer, roots []Root) error {
	var docs []string
	for _, r := range roots {
		if d := r.Document(); d != "" {
			docs = append(docs, d)
		}
	}
	if len(docs) == 1 {
		d := docs[0]
		if !strings.HasSuffix(d, "\n") {
			d += "\n"
		}
		_, err := io.WriteString(w, d)
		return err
	}
	var raw bytes.Buffer
	raw.WriteString("[")
	for i, d := range docs {
		if i > 0 {
			raw.WriteString(",")
		}
		raw.WriteString(d)
	}
	raw.WriteString("]")
	var out bytes.Buffer
	if err := json.Indent(&out, raw.Bytes(), "", "  "); err != nil {
		return fmt.Errorf("documents: %w", err)
	}
	out.WriteString("\n")
	_, err := w.Write(out.Bytes())
	return err
}

// FileNames returns the name of each root's file in an output directory:
// "<aibom-name>.cdx.json", core.AIBOMName being unique within a namespace.
// When a scan covers several namespaces and two roots share an AIBOM name,
// theirs are "<namespace>.<aibom-name>.cdx.json" (a namespace has no dots).
func FileNames(roots []Root) []string {
	count := map[string]int{}
	for _, r := range roots {
		count[r.AIBOMName]++
	}
	out := make([]string, len(roots))
	for i, r := range roots {
		if count[r.AIBOMName] > 1 {
			out[i] = r.Object.GetNamespace() + "." + r.AIBOMName + ".cdx.json"
		} else {
			out[i] = r.AIBOMName + ".cdx.json"
		}
	}
	return out
}

// WriteDir writes every root's document into dir (created if need be), one
// file per root named by FileNames, byte for byte. Roots without a document
// get no file. It returns the paths written.
func WriteDir(dir string, roots []Root) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for i, name := range FileNames(roots) {
		d := roots[i].Document()
		if d == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(d), 0o644); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}

// WriteXML prints the one root's document as CycloneDX XML
// (document.ToXML). An XML stream holds one document: several roots are an
// error that says how to narrow the input.
func WriteXML(w io.Writer, roots []Root) error {
	var docs []string
	for _, r := range roots {
		if d := r.Document(); d != "" {
			docs = append(docs, d)
		}
	}
	if len(docs) != 1 {
		return fmt.Errorf("-o cyclonedx-xml prints one document and there are %d roots with a document: scan one file or namespace, or use -o json", len(docs))
	}
	x, err := document.ToXML([]byte(docs[0]))
	if err != nil {
		return err
	}
	_, err = w.Write(x)
	return err
}
