package sink

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	ceclient "github.com/cloudevents/sdk-go/v2/client"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// purlDoc is a document with what json.Marshal would escape (&, <, >) and a
// trailing newline, as the builder writes it.
var purlDoc = []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","components":[{"purl":"pkg:oci/vllm@sha256%3Aabc?repository_url=ghcr.io/vllm&tag=v1","description":"<b>&amp;</b>"}]}` + "\n")

func sdkEvents(t *testing.T) []Event {
	subject := Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "vllm", UID: "uid-1"}
	key := types.NamespacedName{Namespace: "team", Name: "deployment-vllm"}
	return []Event{
		{Op: OpWrite, AIBOM: key, Subject: subject, Document: purlDoc, SHA256: sha256Hex(purlDoc)},
		{Op: OpDelete, AIBOM: key, Subject: subject, SHA256: sha256Hex(purlDoc)},
	}
}

// checkSDKEvent checks what the SDK made of one of sdkEvents.
func checkSDKEvent(t *testing.T, sent Event, got event.Event) {
	t.Helper()
	require.NoError(t, got.Validate())
	require.Equal(t, "/apis/aibom.dev/v1alpha1/namespaces/team/aiboms/deployment-vllm", got.Source())
	require.Equal(t, "team/Deployment/vllm", got.Subject())
	require.Equal(t, "uid-1", got.Extensions()["aibomuid"])
	switch sent.Op {
	case OpWrite:
		require.Equal(t, EventTypeWritten, got.Type())
		require.Equal(t, MediaType, got.DataContentType())
		require.Equal(t, DataSchema, got.DataSchema())
		require.Equal(t, sent.Document, got.Data(), "data is the stored document, byte for byte")
		require.Equal(t, got.ID(), sha256Hex(got.Data()), "sha256(data) is the event id")
		require.Equal(t, got.ID(), got.Extensions()["aibomsha256"])
		require.Equal(t, sent.SHA256, got.ID(), "and the AIBOM's status.documentSHA256")
	case OpDelete:
		require.Equal(t, EventTypeDeleted, got.Type())
		require.Equal(t, "deleted:uid-1:"+sent.SHA256, got.ID())
		require.Empty(t, got.Data())
	}
}

func TestEveryEventTypeParsesWithTheCloudEventsSDKBinding(t *testing.T) {
	got := make(chan event.Event, 2)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := cehttp.NewEventFromHTTPRequest(r)
		if err != nil {
			t.Errorf("the SDK refuses the event: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got <- *e
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	c, err := NewHTTPClient(ClientOptions{CABundle: pemOf(srv.Certificate()), Destinations: loopback})
	require.NoError(t, err)
	w := &Webhook{SinkName: "sdk", URL: srv.URL, Client: c}
	for _, e := range sdkEvents(t) {
		_, err := w.Deliver(context.Background(), e)
		require.NoError(t, err)
		checkSDKEvent(t, e, <-got)
	}
}

func TestEveryEventTypeIsAcceptedByTheCloudEventsSDKReceiveHandler(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := cehttp.New()
	require.NoError(t, err)
	var mu sync.Mutex
	var got []event.Event
	h, err := ceclient.NewHTTPReceiveHandler(ctx, p, func(_ context.Context, e event.Event) protocol.Result {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e)
		return protocol.ResultACK
	})
	require.NoError(t, err)
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	c, err := NewHTTPClient(ClientOptions{CABundle: pemOf(srv.Certificate()), Destinations: loopback})
	require.NoError(t, err)
	w := &Webhook{SinkName: "sdk", URL: srv.URL, Client: c, Now: func() time.Time { return time.Unix(1700000000, 0) }}
	sent := sdkEvents(t)
	for _, e := range sent {
		// A 5xx here (the SDK failing to parse) would be an error: retried.
		_, err := w.Deliver(ctx, e)
		require.NoError(t, err, "the SDK's handler acknowledges the event")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, len(sent))
	for i := range sent {
		checkSDKEvent(t, sent[i], got[i])
	}
}
