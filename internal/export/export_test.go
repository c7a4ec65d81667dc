package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

// aibom is the controller's AIBOM of Deployment name, holding doc.
func aibom(name, doc string) *v1alpha1.AIBOM {
	sum := sha256.Sum256([]byte(doc))
	a := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: reconcile.AIBOMName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, name),
		Labels: map[string]string{reconcile.ManagedByLabel: reconcile.ManagedBy}},
		Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: "uid-" + name}}}
	a.Status.Document, a.Status.DocumentSHA256, a.Status.DocumentSize = doc, hex.EncodeToString(sum[:]), len(doc)
	return a
}

func run(t *testing.T, objs ...*v1alpha1.AIBOM) (Result, error, string, string) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, o := range objs {
		b = b.WithObjects(o).WithStatusSubresource(o)
	}
	var stdout, stderr bytes.Buffer
	res, err := Run(context.Background(), Options{Reader: b.Build(), Namespace: "team", Stdout: &stdout, Stderr: &stderr})
	return res, err, stdout.String(), stderr.String()
}

func TestExportWritesOneDocumentPerLine(t *testing.T) {
	// As the builder writes them (with a final newline), and without one.
	res, err, out, _ := run(t, aibom("a", `{"bomFormat":"CycloneDX","n":1}`+"\n"), aibom("b", `{"bomFormat":"CycloneDX","n":2}`))
	require.NoError(t, err)
	require.Equal(t, 2, res.Written)
	require.Equal(t, `{"bomFormat":"CycloneDX","n":1}`+"\n"+`{"bomFormat":"CycloneDX","n":2}`+"\n", out, "one line each, no blank line")
}

func TestExportEscapesWhatTheStatusSaysBeforeATerminal(t *testing.T) {
	held := aibom("held", "")
	held.Status.Document = ""
	held.Status.DocumentRef = &v1alpha1.DocumentReference{Sink: "reg\x1b]0;pwned\x07", Location: "registry.example/x@sha256:1\x1b[2J\r\u009b31m", SHA256: "abc\x1b[31m", Size: 5}
	// A document whose bytes hash right but would drive a terminal or break
	// the one-per-line output.
	evil := aibom("evil", "{\"a\":\"x\u009b2J\"}\n")
	multi := aibom("multi", "{\n\"a\":1}\n")
	mismatched := aibom("mismatched", `{"a":1}`)
	mismatched.Status.DocumentSHA256 = "\x1b[31mforged"
	res, err, out, errOut := run(t, held, evil, multi, mismatched)
	require.Error(t, err)
	require.Equal(t, 1, res.HeldBySink)
	require.Len(t, res.NotOneLine, 2)
	require.Len(t, res.Mismatched, 1)
	require.Empty(t, out)
	for _, c := range []string{"\x1b", "\x07", "\r", "\u009b"} {
		require.NotContains(t, errOut, c)
	}
	require.Contains(t, errOut, `held by sink "reg\x1b]0;pwned\a" at "registry.example/x@sha256:1\x1b[2J\r\u009b31m"`)
	require.Equal(t, 4, strings.Count(errOut, "\n"), "one note a line")
}

func TestPrintable(t *testing.T) {
	require.Equal(t, "registry.example/x@sha256:abc", Printable("registry.example/x@sha256:abc"))
	require.Equal(t, `"a\x1b[31mb"`, Printable("a\x1b[31mb"))
	require.Equal(t, `"caf\u00e9"`, Printable("café"))
}

// #29 item 8: an AIBOM the controller did not write (any name other than
// the controller's name for its subject, or without its label) is never
// exported, whatever its status says.
func TestExportSkipsAIBOMsTheControllerDidNotWrite(t *testing.T) {
	doc := `{"bomFormat":"CycloneDX","specVersion":"1.6"}`
	sum := sha256.Sum256([]byte(doc))
	mk := func(name string, labels map[string]string) *v1alpha1.AIBOM {
		return &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels},
			Spec:   v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "llm", UID: "u"}},
			Status: v1alpha1.AIBOMStatus{Document: doc, DocumentSHA256: hex.EncodeToString(sum[:])}}
	}
	managed := map[string]string{reconcile.ManagedByLabel: reconcile.ManagedBy}
	genuine := mk(reconcile.AIBOMName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "llm"), managed)
	scheme := runtime.NewScheme()
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(genuine, mk("totally-legit", managed), mk("unlabelled", nil)).Build()
	var out, errs bytes.Buffer
	res, err := Run(context.Background(), Options{Reader: c, Namespace: "ns", Stdout: &out, Stderr: &errs})
	require.NoError(t, err)
	require.Equal(t, 1, res.Written)
	require.Equal(t, []string{"ns/totally-legit", "ns/unlabelled"}, res.Foreign)
	require.Contains(t, errs.String(), "ns/totally-legit: not written by the controller")
}
