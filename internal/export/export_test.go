package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/core/reconcile"
)

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
