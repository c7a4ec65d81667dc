package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/client-go/util/jsonpath"

	"github.com/aibom-dev/aibom/internal/scan"
)

// jsonPathPrefix starts the -o value of a JSONPath template, as in kubectl.
const jsonPathPrefix = "jsonpath="

// parseJSONPath reads "-o jsonpath=TEMPLATE": ok is false for another
// output; an error is a template that does not parse.
func parseJSONPath(output string) (jp *jsonpath.JSONPath, ok bool, err error) {
	tpl, ok := strings.CutPrefix(output, jsonPathPrefix)
	if !ok {
		return nil, false, nil
	}
	if tpl == "" {
		return nil, true, fmt.Errorf("-o jsonpath= needs a template, e.g. -o jsonpath='{.items[*].metadata.component.name}'")
	}
	jp = jsonpath.New("output")
	// As kubectl's --allow-missing-template-keys (true by default): a key
	// that one document lacks prints nothing, rather than failing.
	jp.AllowMissingKeys(true)
	if err := jp.Parse(tpl); err != nil {
		return nil, true, fmt.Errorf("-o jsonpath: %w", err)
	}
	return jp, true, nil
}

// writeJSONPath prints jp over the documents as a list, {"items": [...]},
// the shape kubectl gives a template over several objects. Every string
// of the documents is escaped for the terminal first (scan.Printable): the
// template's own text ({"\n"}, {"\t"}) is printed as written, the values
// read from manifests or a cluster never drive a terminal.
func writeJSONPath(w io.Writer, jp *jsonpath.JSONPath, roots []scan.Root) error {
	items := []any{}
	for _, r := range roots {
		d := r.Document()
		if d == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(d))
		dec.UseNumber() // numbers print as written ("version": 1, not 1e+00)
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("document of %s: %w", r.AIBOMName, err)
		}
		items = append(items, printableValues(v))
	}
	var b bytes.Buffer
	if err := jp.Execute(&b, map[string]any{"items": items}); err != nil {
		return fmt.Errorf("-o jsonpath: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// printableValues escapes every string of a decoded JSON value, keys and
// values, in place.
func printableValues(v any) any {
	switch x := v.(type) {
	case string:
		return scan.Printable(x)
	case []any:
		for i := range x {
			x[i] = printableValues(x[i])
		}
	case map[string]any:
		for k, e := range x {
			e = printableValues(e)
			if pk := scan.Printable(k); pk != k {
				delete(x, k)
				k = pk
			}
			x[k] = e
		}
	}
	return v
}

// writeNames prints one line per root, "<kind>.<group>/<name>" in lower
// case kind as "kubectl get -o name" does ("deployment.apps/web", a core
// kind without a group: "pod/web"), in the scan's order, escaped.
func writeNames(w io.Writer, roots []scan.Root) error {
	var b strings.Builder
	for _, r := range roots {
		kind := strings.ToLower(r.Entry.Kind.Kind)
		if r.Entry.Group != "" {
			kind += "." + r.Entry.Group
		}
		fmt.Fprintf(&b, "%s/%s\n", scan.Printable(kind), scan.Printable(r.Object.GetName()))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
