package reconcile

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// statusMergePatch leaves the document out of the diff; applied to the
// stored object it must give what client.MergeFrom's patch gives. Over a
// base with no status (a create's answer: the API server stores none) the
// stored object has no status either, and the patch is the whole status:
// the result decodes to the same AIBOM, though zero fields the struct
// always encodes (summary.images) are stored where the diff left them out.
func TestStatusMergePatchIsTheMergeFromPatch(t *testing.T) {
	doc := `{"bomFormat":"CycloneDX","specVersion":"1.6","metadata":{"component":{"name":"<vllm> & \"quoted\""}}}`
	aibom := func(document, sha string, absorbed ...string) *v1alpha1.AIBOM {
		a := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "deployment-vllm", ResourceVersion: "7"},
			Status: v1alpha1.AIBOMStatus{Document: document, DocumentSHA256: sha, DocumentSize: len(document), InputHash: "in-" + sha,
				Absorbed: absorbed, AbsorbedCount: len(absorbed), Summary: v1alpha1.Summary{Runtime: "vllm"}}}
		meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Reported"})
		return a
	}
	cases := map[string]struct{ base, next *v1alpha1.AIBOM }{
		"a first document (the cache's copy has none)": {&v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "deployment-vllm"}}, aibom(doc, "a")},
		"a new document over the cache's copy":         {aibom("", "a"), aibom(doc+" ", "b", "ReplicaSet.apps/x")},
		"the same document, other facts":               {aibom(doc, "a"), aibom(doc, "a", "ReplicaSet.apps/x")},
		"the last document kept (left out)":            {aibom("", "a", "ReplicaSet.apps/x"), aibom("", "a")},
		"a document removed":                           {aibom(doc, "a"), aibom("", "a")},
		"nothing changed":                              {aibom(doc, "a"), aibom(doc, "a")},
		"metadata and a new document":                  {aibom("", "a"), withLabel(aibom(doc, "b"), "team", "ml")},
		"as stored, a condition and facts gone":        {stored(aibom("", "a", "ReplicaSet.apps/x")), withoutFacts(stored(aibom(doc, "b")))},
		"as stored, nothing changed":                   {stored(aibom(doc, "a")), stored(aibom(doc, "a"))},
		"as stored, a first status":                    {withoutStatus(stored(aibom("", ""))), stored(aibom(doc, "a", "ReplicaSet.apps/x"))},
		"as stored, a first status and no document":    {withoutStatus(stored(aibom("", ""))), stored(aibom("", "a"))},
		"as stored, a first status and new labels":     {withoutStatus(stored(aibom("", ""))), withLabel(stored(aibom(doc, "a")), "team", "ml")},
		"as stored, a document alone, then none":       {documentOnly(stored(aibom("", "")), doc), stored(aibom("", "a"))},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			stored, err := json.Marshal(c.base)
			require.NoError(t, err)
			noStatus := reflect.ValueOf(c.base.Status).IsZero()
			if noStatus {
				var obj map[string]any
				require.NoError(t, json.Unmarshal(stored, &obj))
				delete(obj, "status")
				stored, err = json.Marshal(obj)
				require.NoError(t, err)
			}
			want, err := client.MergeFrom(c.base).Data(c.next)
			require.NoError(t, err)
			got, err := statusMergePatch(c.base, c.next)
			require.NoError(t, err)
			wantObj, err := jsonpatch.MergePatch(stored, want)
			require.NoError(t, err)
			gotObj, err := jsonpatch.MergePatch(stored, got)
			require.NoError(t, err)
			if !noStatus {
				require.JSONEq(t, string(wantObj), string(gotObj), "patch %s, MergeFrom's %s", got, want)
				return
			}
			var wantAIBOM, gotAIBOM v1alpha1.AIBOM
			require.NoError(t, json.Unmarshal(wantObj, &wantAIBOM))
			require.NoError(t, json.Unmarshal(gotObj, &gotAIBOM))
			require.Equal(t, wantAIBOM, gotAIBOM, "patch %s, MergeFrom's %s", got, want)
		})
	}
}

// documentOnly leaves the AIBOM a status of a document alone.
func documentOnly(a *v1alpha1.AIBOM, doc string) *v1alpha1.AIBOM {
	a.Status = v1alpha1.AIBOMStatus{Document: doc}
	return a
}

// stored gives an AIBOM what the API server stores with it: owner, labels,
// managed fields, a UID.
func stored(a *v1alpha1.AIBOM) *v1alpha1.AIBOM {
	a.UID, a.Generation = "aibom-uid", 1
	a.Labels = map[string]string{ManagedByLabel: ManagedBy}
	a.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "vllm", UID: "deployment-uid"}}
	a.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "aibom-controller", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}}
	a.Spec.Subject = v1alpha1.Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "vllm", UID: "deployment-uid"}
	meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: "Truncated", Status: metav1.ConditionFalse, Reason: "Fits"})
	return a
}

func withoutStatus(a *v1alpha1.AIBOM) *v1alpha1.AIBOM {
	a.Status = v1alpha1.AIBOMStatus{}
	return a
}

func withoutFacts(a *v1alpha1.AIBOM) *v1alpha1.AIBOM {
	a.Status.Summary = v1alpha1.Summary{}
	meta.RemoveStatusCondition(&a.Status.Conditions, "Truncated")
	return a
}

// Between objects that differ in their status alone, the patch is
// MergeFrom's to the byte.
func TestStatusOnlyMergePatchIsMergeFromsBytes(t *testing.T) {
	base := stored(&v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "deployment-vllm", ResourceVersion: "7"}})
	for name, next := range map[string]*v1alpha1.AIBOM{
		"first status": func() *v1alpha1.AIBOM {
			n := base.DeepCopy()
			n.Status = v1alpha1.AIBOMStatus{DocumentSHA256: "b", InputHash: "in", Absorbed: []string{"ReplicaSet.apps/x"}, AbsorbedCount: 1}
			return n
		}(),
		"no change": base.DeepCopy(),
	} {
		t.Run(name, func(t *testing.T) {
			want, err := client.MergeFrom(base).Data(next)
			require.NoError(t, err)
			got, err := statusMergePatch(base, next)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		})
	}
}

func withLabel(a *v1alpha1.AIBOM, k, v string) *v1alpha1.AIBOM {
	a.Labels = map[string]string{k: v}
	a.Annotations = map[string]string{"note": "<&>"}
	return a
}

// The status patch of a first document of about 8 KB over the cache's copy
// of a new AIBOM (its metadata as stored, no status): statusMergePatch
// against client.MergeFrom's diff.
func BenchmarkStatusMergePatch(b *testing.B) {
	doc := `{"bomFormat":"CycloneDX","components":[` + strings.Repeat(`{"type":"container","name":"vllm/vllm-openai","version":"v0.6.3"},`, 120) + `{}]}`
	base := stored(&v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "deployment-vllm", ResourceVersion: "7"}})
	base.Status = v1alpha1.AIBOMStatus{}
	next := base.DeepCopy()
	next.Status = v1alpha1.AIBOMStatus{Document: doc, DocumentSHA256: "a", DocumentSize: len(doc), InputHash: "in", Summary: v1alpha1.Summary{Runtime: "vllm"}}
	b.Run("statusMergePatch", func(b *testing.B) {
		for b.Loop() {
			if _, err := statusMergePatch(base, next); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MergeFrom", func(b *testing.B) {
		for b.Loop() {
			if _, err := client.MergeFrom(base).Data(next); err != nil {
				b.Fatal(err)
			}
		}
	})
}
