// Package export writes the documents a cluster's AIBOMs hold, as stored
// (never recomputed): each is checked against its stored SHA-256 first. A
// document over the inline cap that a sink holds is not in the cluster; for
// it, export says where it is. The "aibom export" command (internal/cli) calls Run.
package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"unicode/utf8"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

// Formats Run writes.
const (
	FormatJSON = "json"
	FormatXML  = "cyclonedx-xml"
)

// Options of Run.
type Options struct {
	// Reader lists AIBOMs (a client of the cluster).
	Reader client.Reader
	// Namespace to export; AllNamespaces exports every namespace.
	Namespace     string
	AllNamespaces bool
	// OutDir, when set, receives one file per document
	// (<namespace>_<aibom>.cdx.json or .cdx.xml) as stored; otherwise the
	// documents go to Stdout, one per line (JSON: each one line, as the
	// controller writes them, or not written), or the only one (XML).
	OutDir string
	// Format is FormatJSON (default) or FormatXML.
	Format string
	// Stdout receives documents; Stderr notes (documents held by a sink,
	// AIBOMs without a document yet, files written).
	Stdout, Stderr io.Writer
}

// Result counts what Run did.
type Result struct {
	Written, HeldBySink, Empty int
	// Foreign lists the AIBOMs the controller did not write (not named as
	// it names its subject's AIBOM, or without its label): never exported.
	Foreign []string
	// Mismatched lists the AIBOMs whose stored document does not hash to
	// the stored SHA-256 (not written).
	Mismatched []string
	// NotOneLine lists the AIBOMs whose document is not one line of JSON
	// free of control characters (not written to Stdout; --out-dir writes
	// it as stored).
	NotOneLine []string
}

// ErrMismatch is returned (wrapped) when a stored document failed its hash
// check; the others were written.
var ErrMismatch = errors.New("stored document does not match its SHA-256")

// Run exports the documents.
func Run(ctx context.Context, o Options) (Result, error) {
	var res Result
	if o.Format == "" {
		o.Format = FormatJSON
	}
	if o.Format != FormatJSON && o.Format != FormatXML {
		return res, fmt.Errorf("-o %q: must be %s or %s", o.Format, FormatJSON, FormatXML)
	}
	if o.AllNamespaces && o.Namespace != "" {
		return res, errors.New("-n and -A exclude each other")
	}
	var list v1alpha1.AIBOMList
	var opts []client.ListOption
	if !o.AllNamespaces {
		opts = append(opts, client.InNamespace(o.Namespace))
	}
	if err := o.Reader.List(ctx, &list, opts...); err != nil {
		return res, fmt.Errorf("list AIBOMs: %w", err)
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool {
		if items[i].Namespace != items[j].Namespace {
			return items[i].Namespace < items[j].Namespace
		}
		return items[i].Name < items[j].Name
	})
	if o.OutDir == "" && o.Format == FormatXML && len(items) > 1 {
		return res, errors.New("-o cyclonedx-xml writes one document per file: give --out-dir")
	}
	if o.OutDir != "" {
		if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
			return res, err
		}
	}
	for i := range items {
		a := &items[i]
		// Every string from an object is escaped before it is printed: a
		// forged status could carry terminal escapes.
		id := Printable(a.Namespace + "/" + a.Name)
		if !reconcile.IsControllerAIBOM(a) {
			// Anyone who may create AIBOMs can make one: only the
			// controller's own are documents of a workload.
			fmt.Fprintf(o.Stderr, "%s: not written by the controller (subject %s %s); not exported\n", id, Printable(a.Spec.Subject.Kind), Printable(a.Spec.Subject.Name))
			res.Foreign = append(res.Foreign, id)
			continue
		}
		st := a.Status
		if st.Document == "" {
			if ref := st.DocumentRef; ref != nil {
				fmt.Fprintf(o.Stderr, "%s: the document (%d bytes, sha256 %s) is held by sink %s at %s\n", id, ref.Size, Printable(ref.SHA256), Printable(ref.Sink), Printable(ref.Location))
				res.HeldBySink++
			} else {
				fmt.Fprintf(o.Stderr, "%s: no document yet\n", id)
				res.Empty++
			}
			continue
		}
		sum := sha256.Sum256([]byte(st.Document))
		if hex.EncodeToString(sum[:]) != st.DocumentSHA256 {
			fmt.Fprintf(o.Stderr, "%s: %v (stored %s); not written\n", id, ErrMismatch, Printable(st.DocumentSHA256))
			res.Mismatched = append(res.Mismatched, id)
			continue
		}
		out := []byte(st.Document)
		ext := ".cdx.json"
		if o.Format == FormatXML {
			x, err := document.ToXML(out)
			if err != nil {
				return res, fmt.Errorf("%s: to XML: %w", id, err)
			}
			out, ext = x, ".cdx.xml"
		}
		if o.OutDir == "" && o.Format == FormatJSON {
			line, ok := oneLine(out)
			if !ok {
				fmt.Fprintf(o.Stderr, "%s: the stored document is not one line of JSON free of control characters; not written (--out-dir writes it as stored)\n", id)
				res.NotOneLine = append(res.NotOneLine, id)
				continue
			}
			if _, err := o.Stdout.Write(line); err != nil {
				return res, err
			}
		} else if o.OutDir == "" {
			if _, err := o.Stdout.Write(withNewline(out)); err != nil {
				return res, err
			}
		} else {
			path := filepath.Join(o.OutDir, a.Namespace+"_"+a.Name+ext)
			if err := os.WriteFile(path, out, 0o644); err != nil {
				return res, err
			}
			fmt.Fprintf(o.Stderr, "%s: %s\n", id, path)
		}
		res.Written++
	}
	if len(res.Mismatched) > 0 {
		return res, fmt.Errorf("%d AIBOM(s): %w", len(res.Mismatched), ErrMismatch)
	}
	if len(res.NotOneLine) > 0 {
		return res, fmt.Errorf("%d AIBOM(s): %w", len(res.NotOneLine), ErrNotOneLine)
	}
	return res, nil
}

// ErrNotOneLine is returned (wrapped) when a document could not be written
// as one line; the others were written.
var ErrNotOneLine = errors.New("stored document is not one line of JSON")

// oneLine returns a JSON document as one line, ended by exactly one
// newline (the builder's documents end with one already), and whether it
// is one: valid JSON with no control character (C0, DEL, C1) but that final
// newline, so that it neither breaks the one-per-line output nor drives a
// terminal.
func oneLine(doc []byte) ([]byte, bool) {
	body := bytes.TrimSuffix(doc, []byte("\n"))
	if !json.Valid(body) || !utf8.Valid(body) {
		return nil, false
	}
	for _, r := range string(body) {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return nil, false
		}
	}
	return withNewline(body), true
}

func withNewline(b []byte) []byte {
	if bytes.HasSuffix(b, []byte("\n")) {
		return b
	}
	return append(b[:len(b):len(b)], '\n')
}

// Printable returns s as it is when it is printable ASCII, else quoted with
// every other character escaped (strconv.QuoteToASCII): what an object says
// reaches a terminal as text, never as control sequences.
func Printable(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}
