package configuration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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
	a.UID = "uid-late"
	changed, _, _ = w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryDelivered, At: at}})
	require.True(t, changed)
	changed, _, _ = w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryFailed, Reason: v1alpha1.ReasonQueueFull, At: at}})
	require.False(t, changed)

	// But a Delivered receipt no delivery of this process wrote (forged in
	// the status) is no delivery: the failure replaces it.
	a = aibom()
	a.UID = "uid-forged"
	a.Status.Sinks[0].State = v1alpha1.DeliveryDelivered
	changed, _, _ = w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryFailed, Reason: v1alpha1.ReasonQueueFull, At: at}})
	require.True(t, changed)
	require.Equal(t, v1alpha1.DeliveryFailed, a.Status.Sinks[0].State)

	// The same receipt reported again (the sink holds the document
	// already) changes nothing.
	a = aibom()
	a.UID = "uid-again"
	again := map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryDelivered, Attempts: 1, At: at}}
	changed, _, _ = w.apply(a, again)
	require.True(t, changed)
	changed, stale, _ = w.apply(a, again)
	require.False(t, changed || stale)

	// A copy with no document yet (the cache has not seen the status the
	// reconciler wrote) is stale: the API server's copy decides.
	a = &v1alpha1.AIBOM{}
	changed, stale, _ = w.apply(a, again)
	require.False(t, changed)
	require.True(t, stale)

	// A sink no longer configured is ignored.
	a = aibom()
	changed, _, _ = w.apply(a, map[string]sink.Result{"gone": {Sink: "gone", Op: sink.OpWrite, SHA256: "full", State: v1alpha1.DeliveryDelivered, At: at}})
	require.False(t, changed)
}

// A sink can deliver a new AIBOM's document before the cache has seen the
// AIBOM (or the status written with it): the receipt is written into the
// API server's copy, not dropped.
func TestStatusWriterWritesAReceiptTheCacheCannotSeeYet(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	stored := &v1alpha1.AIBOM{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "deployment-vllm", UID: "uid-new"},
		Status: v1alpha1.AIBOMStatus{Document: "{}", DocumentSHA256: "s",
			Sinks: []v1alpha1.SinkDelivery{{Sink: "a", State: v1alpha1.DeliveryPending, DocumentSHA256: "s"}}}}
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(stored).Build()
	for name, cached := range map[string]*v1alpha1.AIBOM{
		"no AIBOM in the cache":         nil,
		"no status in the cache's copy": {ObjectMeta: stored.ObjectMeta},
	} {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme)
			if cached != nil {
				b = b.WithObjects(cached)
			}
			w := &StatusWriter{Client: api, API: api, Cache: b.Build(), Sinks: names{"a"}}
			key := client.ObjectKeyFromObject(stored)
			r := sink.Result{Sink: "a", Op: sink.OpWrite, AIBOM: key, SHA256: "s", State: v1alpha1.DeliveryDelivered, Attempts: 1, At: time.Unix(1700000000, 0)}
			require.NoError(t, w.write(context.Background(), key, map[string]sink.Result{"a": r}))
			got := &v1alpha1.AIBOM{}
			require.NoError(t, api.Get(context.Background(), key, got))
			require.Equal(t, v1alpha1.DeliveryDelivered, got.Status.Sinks[0].State)
			require.True(t, meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionSynced))
		})
	}
}

func TestStatusWriterRecordsAttemptsAndTheNextAttempt(t *testing.T) {
	w := &StatusWriter{Sinks: names{"a"}}
	a := &v1alpha1.AIBOM{Status: v1alpha1.AIBOMStatus{Document: "{}", DocumentSHA256: "s",
		Sinks: []v1alpha1.SinkDelivery{{Sink: "a", State: v1alpha1.DeliveryPending, DocumentSHA256: "s"}}}}
	at := time.Unix(1700000000, 0)
	next := at.Add(3500 * time.Millisecond)
	changed, _, _ := w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "s", State: v1alpha1.DeliveryPending,
		Reason: "HTTP503", Message: "attempt 6 failed, retrying: POST https://hooks.example: HTTP 503 Service Unavailable (transient)", Attempts: 6, At: at, NextAttempt: next}})
	require.True(t, changed)
	got := a.Status.Sinks[0]
	require.EqualValues(t, 6, got.Attempts)
	require.NotNil(t, got.NextAttemptTime)
	require.Equal(t, at.Add(4*time.Second).Unix(), got.NextAttemptTime.Unix(), "rounded up: never before the attempt")
	// Delivered: no next attempt.
	w.apply(a, map[string]sink.Result{"a": {Sink: "a", Op: sink.OpWrite, SHA256: "s", State: v1alpha1.DeliveryDelivered, Attempts: 7, At: at, Location: "https://hooks.example"}})
	require.Nil(t, a.Status.Sinks[0].NextAttemptTime)
	require.EqualValues(t, 7, a.Status.Sinks[0].Attempts)
}

func TestSinkConfigurationErrorsQuoteNoURL(t *testing.T) {
	secretURL := "https://alice:hunter2pass@hooks.example/services/T0SECRETPATH?token=querysecret123#frag"
	for _, raw := range []string{secretURL + "%zz", "http://hooks.example/services/T0SECRETPATH", "hooks.example/T0SECRETPATH"} {
		err := checkURL("webhook.url", raw, "https")
		require.Error(t, err, raw)
		for _, p := range []string{"hunter2pass", "T0SECRETPATH", "querysecret123"} {
			require.NotContains(t, err.Error(), p)
		}
	}
	require.NoError(t, checkURL("webhook.url", secretURL, "https"))

	d, err := destinations(v1alpha1.AIBOMConfigSpec{AllowedDestinations: []string{"127.0.0.1", "10.96.0.0/12", "::1"}}, nil)
	require.NoError(t, err)
	require.Len(t, d.Allowed, 3)
	require.Equal(t, "127.0.0.1/32", d.Allowed[0].String())
	_, err = destinations(v1alpha1.AIBOMConfigSpec{AllowedDestinations: []string{"localhost"}}, nil)
	require.ErrorContains(t, err, "spec.allowedDestinations[0]")
}
