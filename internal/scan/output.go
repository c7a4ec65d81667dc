package scan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/aibom-dev/aibom/pkg/core/document"
)

// WriteTable prints one line per root: namespace, kind, name, runtime,
// models, absorbed workloads and resolved digests (resolved/containers). A
// root without a document shows "-" and "error" in the digests column.
func WriteTable(w io.Writer, roots []Root) error { return writeTable(w, roots, false) }

// WriteWide is WriteTable with the kind's group, the number of images, the
// document's confidence and the name of the AIBOM the controller writes.
func WriteWide(w io.Writer, roots []Root) error { return writeTable(w, roots, true) }

func writeTable(w io.Writer, roots []Root, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "NAMESPACE\tKIND\tNAME\tRUNTIME\tMODELS\tABSORBED\tDIGESTS"
	if wide {
		header += "\tGROUP\tIMAGES\tCONFIDENCE\tAIBOM"
	}
	fmt.Fprintln(tw, header)
	for _, r := range roots {
		s := r.Report.Status
		digests := "error"
		if r.Document() != "" {
			resolved, total := r.Digests()
			digests = fmt.Sprintf("%d/%d", resolved, total)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s", Printable(r.Object.GetNamespace()), Printable(r.Entry.Kind.Kind), Printable(r.Object.GetName()),
			Printable(dash(s.Summary.Runtime)), Printable(dash(strings.Join(s.Summary.Models, ","))), Printable(dash(strings.Join(s.Absorbed, ","))), digests)
		if wide {
			images := "-"
			if r.Document() != "" {
				images = strconv.Itoa(s.Summary.Images)
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s", dash(r.Entry.Group), images, dash(s.Summary.Confidence), Printable(r.AIBOMName))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// documents returns the roots' documents, in root order, skipping roots
// without one.
func documents(roots []Root) []string {
	var docs []string
	for _, r := range roots {
		if d := r.Document(); d != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

// jsonArray is the documents as one JSON array, indented by two spaces.
func jsonArray(docs []string) ([]byte, error) {
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
		return nil, fmt.Errorf("documents: %w", err)
	}
	out.WriteString("\n")
	return out.Bytes(), nil
}

// WriteJSON prints the documents as a JSON array, in root order, indented
// by two spaces: always an array, for one root and for none ("[]") too, so
// that a script does not depend on how many roots there are.
func WriteJSON(w io.Writer, roots []Root) error {
	out, err := jsonArray(documents(roots))
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// WriteYAML prints the documents as a YAML sequence, in root order ("[]"
// for none).
func WriteYAML(w io.Writer, roots []Root) error {
	arr, err := jsonArray(documents(roots))
	if err != nil {
		return err
	}
	out, err := yaml.JSONToYAML(arr)
	if err != nil {
		return fmt.Errorf("documents: %w", err)
	}
	_, err = w.Write(out)
	return err
}

// ErrNotOneDocument is wrapped by WriteCycloneDX's error when there is not
// exactly one document to print.
var ErrNotOneDocument = errors.New("not exactly one document")

// WriteCycloneDX prints the one root's document as a CycloneDX BOM: JSON
// byte for byte as the controller writes it to status.document, or XML
// (document.ToXML). A BOM is one document: no root, or several, is an error
// that says how to get one file per root.
func WriteCycloneDX(w io.Writer, roots []Root, xml bool) error {
	docs := documents(roots)
	if len(docs) != 1 {
		format := "cyclonedx-json"
		if xml {
			format = "cyclonedx-xml"
		}
		return fmt.Errorf("-o %s prints one BOM and there are %d roots with a document: use --out-dir DIR for one file per root, narrow the input (one file, -n), or use -o json for an array: %w",
			format, len(docs), ErrNotOneDocument)
	}
	d := docs[0]
	if !xml {
		if !strings.HasSuffix(d, "\n") {
			d += "\n"
		}
		_, err := io.WriteString(w, d)
		return err
	}
	x, err := document.ToXML([]byte(d))
	if err != nil {
		return err
	}
	_, err = w.Write(x)
	return err
}

// FileNames returns the name of each root's file in an output directory:
// "<aibom-name>.cdx.json", reconcile.AIBOMName being unique within a namespace.
// When a scan covers several namespaces and two roots share an AIBOM name,
// theirs are "<namespace>.<aibom-name>.cdx.json" (a namespace has no dots).
func FileNames(roots []Root) []string { return fileNames(roots, ".cdx.json") }

func fileNames(roots []Root, ext string) []string {
	count := map[string]int{}
	for _, r := range roots {
		count[r.AIBOMName]++
	}
	out := make([]string, len(roots))
	for i, r := range roots {
		if count[r.AIBOMName] > 1 {
			out[i] = safeFileName(r.Object.GetNamespace()+"."+r.AIBOMName) + ext
		} else {
			out[i] = safeFileName(r.AIBOMName) + ext
		}
	}
	return out
}

// maxFileStem bounds a file name without its extension: file systems take
// 255 bytes.
const maxFileStem = 200

// safeFileName makes a name a single, harmless path element: characters
// other than lower-case letters, digits, "." and "-" (a "/", a NUL, a
// control character from a hand-written manifest) become "_", a name made
// of dots is prefixed, and a name longer than maxFileStem is shortened and
// given a hash of the whole name, so that it stays unique. A name that
// needs none of this is returned as is.
func safeFileName(name string) string {
	var b strings.Builder
	changed := false
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			b.WriteRune(r)
			continue
		}
		b.WriteByte('_')
		changed = true
	}
	out := b.String()
	if strings.Trim(out, ".") == "" {
		out = "_" + out
		changed = true
	}
	if len(out) > maxFileStem || changed && out != name {
		sum := sha256.Sum256([]byte(name))
		suffix := "-" + hex.EncodeToString(sum[:8])
		if len(out) > maxFileStem-len(suffix) {
			out = out[:maxFileStem-len(suffix)]
		}
		out += suffix
	}
	return out
}

// WriteDir writes every root's document into dir (created if need be), one
// file per root named by FileNames, byte for byte. Roots without a document
// get no file. It returns the paths written.
func WriteDir(dir string, roots []Root) ([]string, error) { return writeDir(dir, roots, false) }

// WriteDirXML is WriteDir in CycloneDX XML (document.ToXML): the files are
// named "<aibom-name>.cdx.xml".
func WriteDirXML(dir string, roots []Root) ([]string, error) { return writeDir(dir, roots, true) }

func writeDir(dir string, roots []Root, xml bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ext := ".cdx.json"
	if xml {
		ext = ".cdx.xml"
	}
	var written []string
	for i, name := range fileNames(roots, ext) {
		d := []byte(roots[i].Document())
		if len(d) == 0 {
			continue
		}
		p := filepath.Join(dir, name)
		if filepath.Dir(p) != filepath.Clean(dir) {
			return written, fmt.Errorf("file name %q would leave %s", name, dir)
		}
		if xml {
			x, err := document.ToXML(d)
			if err != nil {
				return written, err
			}
			d = x
		}
		if err := os.WriteFile(p, d, 0o644); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}

// Printable escapes what a terminal would interpret in a value read from a
// manifest or a cluster: control characters (a newline forging a table row,
// an ANSI escape sequence), other non-printable runes and tabs are written
// as Go escapes ("\\n", "\\x1b"); invalid UTF-8 as "\\ufffd". Printable text
// is unchanged.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r) // 'x' with Go escapes
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}
