package scale

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// The replay's writes are the controller's: same namespace, labels, owner
// references and spec on the create, the whole status (document included)
// in the patch, and nothing the API server assigned.
func TestReplayWritesCarryWhatTheControllerWrote(t *testing.T) {
	src := v1alpha1.AIBOM{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "scale-003", Name: "deployment-vllm-7", UID: "aibom-uid", ResourceVersion: "42",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "aibom-controller"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: "vllm-7", UID: "deployment-uid", BlockOwnerDeletion: ptr.To(false),
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "aibom-controller"}},
		},
		Spec: v1alpha1.AIBOMSpec{Subject: v1alpha1.Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "vllm-7", UID: "deployment-uid"}},
		Status: v1alpha1.AIBOMStatus{
			Document: `{"bomFormat":"CycloneDX"}`, DocumentSHA256: "abc", DocumentSize: 25, InputHash: "in",
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "DocumentWritten", LastTransitionTime: metav1.Unix(1, 0)}},
		},
	}
	writes, err := replayWrites([]v1alpha1.AIBOM{src})
	require.NoError(t, err)
	require.Len(t, writes, 1)
	c := writes[0].create
	require.Equal(t, "scale-003", c.Namespace)
	require.Equal(t, "replay-deployment-vllm-7", c.Name)
	require.Equal(t, src.Labels, c.Labels)
	require.Equal(t, src.OwnerReferences, c.OwnerReferences)
	require.Equal(t, src.Spec, c.Spec)
	require.Empty(t, c.UID)
	require.Empty(t, c.ResourceVersion)
	require.Empty(t, c.ManagedFields)
	require.Zero(t, c.Status)

	var patch struct {
		Status v1alpha1.AIBOMStatus `json:"status"`
	}
	require.NoError(t, json.Unmarshal(writes[0].status, &patch))
	require.Equal(t, src.Status, patch.Status)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(writes[0].status, &keys))
	require.Len(t, keys, 1, "the patch touches the status only")

	// The copy is independent of the listed AIBOM.
	c.Labels["x"] = "y"
	c.OwnerReferences[0].Name = "other"
	require.NotContains(t, src.Labels, "x")
	require.Equal(t, "vllm-7", src.OwnerReferences[0].Name)
}

func TestReplayWritesRefuseANameTooLongToCopy(t *testing.T) {
	long := v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "scale-000", Name: strings.Repeat("a", 250)}}
	_, err := replayWrites([]v1alpha1.AIBOM{long})
	require.ErrorContains(t, err, "exceed 253")
}
