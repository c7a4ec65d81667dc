package configuration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/sink"
)

type names []string

func (n names) Names() []string { return n }

func TestStatusWriterApply(t *testing.T) {
	w := &StatusWriter{Sinks: names{"a", "b"}, MaxInline: func() int { return 100 }}
	aibom := func() *v1alpha1.AIBOM {
		return &v1alpha1.AIBOM{Status: v1alpha1.AIBOMStatus{Document: "reduced", DocumentSHA256: "small", DocumentSize: 7,
			Sinks: []v1alpha1.SinkDelivery{{Sink: "a", State: v1alpha1.DeliveryPending, DocumentSHA256: "full"}, {Sink: "b", State: v1alpha1.DeliveryPending, DocumentSHA256: "full"}}}}
	}
	at := time.Unix(1700000000, 0)

	// A failure: SinkFailed names the sink, Synced is False.
	a := aibom()
	changed, stale, swap := w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryFailed, Reason: "HTTP503", Message: "down", At: at, Size: 500}})
	require.True(t, changed)
	require.False(t, stale || swap)
	f := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionSinkFailed)
	require.Equal(t, "True", string(f.Status))
	require.Equal(t, v1alpha1.ReasonDeliveryFailed, f.Reason)
	require.Contains(t, f.Message, "sink a: Failed (HTTP503): down")
	require.Equal(t, "False", string(meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionSynced).Status))

	// Both deliver the full document (over the inline cap of 100): the body
	// is replaced by a reference, and every condition recovers.
	a = aibom()
	changed, _, _ = w.apply(a, map[string]sink.Result{
		"a": {Sink: "a", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryDelivered, Location: "reg/x@sha256:1", At: at, Size: 500},
		"b": {Sink: "b", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryDelivered, Location: "https://b", At: at, Size: 500}})
	require.True(t, changed)
	require.Empty(t, a.Status.Document)
	require.Equal(t, "full", a.Status.DocumentSHA256)
	require.Equal(t, 500, a.Status.DocumentSize)
	require.NotNil(t, a.Status.DocumentRef)
	require.Equal(t, "full", a.Status.DocumentRef.SHA256)
	require.True(t, meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionSynced))
	require.True(t, meta.IsStatusConditionFalse(a.Status.Conditions, v1alpha1.ConditionSinkFailed))
	require.Equal(t, v1alpha1.ReasonStoredInSink, meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionTruncated).Reason)

	// On the cache's copy (no body), the swap asks for the API server's.
	a = aibom()
	a.Status.Document = ""
	_, _, swap = w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryDelivered, Location: "l", At: at, Size: 500}})
	require.True(t, swap)

	// A result about another document than the status holds is stale.
	a = aibom()
	changed, stale, _ = w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "older", State: v1alpha1.DeliveryDelivered, At: at}})
	require.False(t, changed)
	require.True(t, stale)

	// A late failure report never overwrites a delivery of the same document.
	a = aibom()
	a.Status.Sinks[0].State = v1alpha1.DeliveryDelivered
	changed, _, _ = w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryFailed, Reason: v1alpha1.ReasonQueueFull, At: at}})
	require.False(t, changed)

	// A sink no longer configured is ignored.
	a = aibom()
	changed, _, _ = w.apply(a, map[string]sink.Result{"gone": {Sink: "gone", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryDelivered, At: at}})
	require.False(t, changed)
}
