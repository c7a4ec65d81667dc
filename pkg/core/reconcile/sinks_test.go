package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// offered is a DocumentSinks that keeps what it is offered.
type offered struct {
	names []string
	got   []DocumentEvent
}

func (o *offered) Names() []string        { return o.names }
func (o *offered) Offer(ev DocumentEvent) { o.got = append(o.got, ev) }

func TestOfferSaysWhetherTheDocumentCanBeReadAgainFromTheAIBOM(t *testing.T) {
	s := &offered{names: []string{"a", "b"}}
	r := &Reconciler{Sinks: s}
	key := client.ObjectKey{Namespace: "ns", Name: "x"}
	// The document in status.document as is: a queue may hold a reference.
	uid := types.UID("uid-x")
	TrustDelivery(uid, "a", "", "f")
	t.Cleanup(func() { forgetTrustedRefs(uid) })
	r.offer(key, uid, v1alpha1.Subject{Kind: "Deployment", Name: "x"}, &sinkDoc{doc: []byte(`{}`), sha: "s", inline: true}, nil)
	// The full document of a reduced status: only the offer has it.
	r.offer(key, uid, v1alpha1.Subject{Kind: "Deployment", Name: "x"}, &sinkDoc{doc: []byte(`{"full":1}`), sha: "f"},
		[]v1alpha1.SinkDelivery{{Sink: "a", State: v1alpha1.DeliveryDelivered, DocumentSHA256: "f"}})
	require.Len(t, s.got, 2)
	require.True(t, s.got[0].Reloadable)
	require.Equal(t, []string{"a", "b"}, s.got[0].To)
	require.False(t, s.got[1].Reloadable)
	require.Equal(t, []string{"b"}, s.got[1].To, "a sink that holds the document is not offered it again")
}

// #29: anyone with update on aiboms/status can write status.sinks. A
// Delivered receipt this process did not see delivered does not stop the
// document from reaching the sink; once the sink's delivery is seen, the
// receipt is trusted and the document is not sent again.
func TestForgedDeliveryReceiptDoesNotStopDelivery(t *testing.T) {
	s := &offered{names: []string{"a"}}
	r := &Reconciler{Sinks: s}
	key := client.ObjectKey{Namespace: "ns", Name: "y"}
	uid := types.UID("uid-y")
	t.Cleanup(func() { forgetTrustedRefs(uid) })
	forged := []v1alpha1.SinkDelivery{{Sink: "a", State: v1alpha1.DeliveryDelivered, DocumentSHA256: "d"}}
	doc := &sinkDoc{doc: []byte(`{}`), sha: "d", inline: true}
	a := &v1alpha1.AIBOM{}
	a.UID, a.Status.DocumentSHA256, a.Status.Sinks = uid, "d", forged

	require.Equal(t, []string{"a"}, undelivered(s.names, a), "a forged receipt is no delivery")
	r.offer(key, uid, v1alpha1.Subject{Kind: "Deployment", Name: "y"}, doc, forged)
	require.Len(t, s.got, 1, "the document is offered despite the forged receipt")
	require.Equal(t, []string{"a"}, s.got[0].To)
	states := sinkStates(uid, forged, s.names, "d")
	require.Equal(t, v1alpha1.DeliveryPending, states[0].State, "a status written now shows the sink pending, not the forged receipt")

	// The same receipt, once this process saw the sink deliver it.
	TrustDelivery(uid, "a", "", "d")
	require.Empty(t, undelivered(s.names, a))
	r.offer(key, uid, v1alpha1.Subject{Kind: "Deployment", Name: "y"}, doc, forged)
	require.Len(t, s.got, 1, "a delivered document is not offered again")
	require.Equal(t, v1alpha1.DeliveryDelivered, sinkStates(uid, forged, s.names, "d")[0].State)
	require.False(t, TrustedReceipt("another-uid", &forged[0]), "a receipt is trusted for its AIBOM only")
}
