package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"
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
	r.offer(key, v1alpha1.Subject{Kind: "Deployment", Name: "x"}, &sinkDoc{doc: []byte(`{}`), sha: "s", inline: true}, nil)
	// The full document of a reduced status: only the offer has it.
	r.offer(key, v1alpha1.Subject{Kind: "Deployment", Name: "x"}, &sinkDoc{doc: []byte(`{"full":1}`), sha: "f"},
		[]v1alpha1.SinkDelivery{{Sink: "a", State: v1alpha1.DeliveryDelivered, DocumentSHA256: "f"}})
	require.Len(t, s.got, 2)
	require.True(t, s.got[0].Reloadable)
	require.Equal(t, []string{"a", "b"}, s.got[0].To)
	require.False(t, s.got[1].Reloadable)
	require.Equal(t, []string{"b"}, s.got[1].To, "a sink that holds the document is not offered it again")
}
