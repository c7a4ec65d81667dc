package sink

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aibom-dev/aibom/internal/testpki"
)

func pemOf(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func TestWebhookPostsAStructuredCloudEventOverVerifiedTLS(t *testing.T) {
	type got struct {
		header http.Header
		body   []byte
	}
	ch := make(chan got, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- got{r.Header.Clone(), b}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()

	c, err := NewHTTPClient(ClientOptions{CABundle: pemOf(srv.Certificate()), Destinations: loopback})
	require.NoError(t, err)
	w := &Webhook{SinkName: "hook", URL: srv.URL + "/events?token=secret", Client: c, BearerToken: "tok", SigningKey: []byte("k"),
		Now: func() time.Time { return time.Unix(1700000000, 0) }}
	doc := []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}` + "\n")
	sha := sha256Hex(doc)
	e := Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: "team", Name: "deployment-vllm"},
		Subject: Subject{APIVersion: "apps/v1", Kind: "Deployment", Name: "vllm", UID: "uid-1"}, Document: doc, SHA256: sha}
	rec, err := w.Deliver(context.Background(), e)
	require.NoError(t, err)
	require.Equal(t, srv.URL, rec.Location, "only the origin: the path and the query may hold a credential")
	g := <-ch
	require.Equal(t, ContentType, g.header.Get("Content-Type"))
	require.Equal(t, "Bearer tok", g.header.Get("Authorization"))
	require.Equal(t, Sign([]byte("k"), g.body), g.header.Get(SignatureHeader))
	var ce map[string]any
	require.NoError(t, json.Unmarshal(g.body, &ce))
	require.Equal(t, "1.0", ce["specversion"])
	require.Equal(t, sha, ce["id"], "the event id is the document hash")
	require.Equal(t, EventTypeWritten, ce["type"])
	require.Equal(t, "/apis/aibom.dev/v1alpha1/namespaces/team/aiboms/deployment-vllm", ce["source"])
	require.Equal(t, "team/Deployment/vllm", ce["subject"])
	require.Equal(t, MediaType, ce["datacontenttype"])
	require.Equal(t, "team", ce["aibomnamespace"])
	require.Equal(t, "Deployment", ce["aibomkind"])
	require.Equal(t, "vllm", ce["aibomname"])
	require.Equal(t, "uid-1", ce["aibomuid"])
	require.Equal(t, sha, ce["aibomsha256"])
	require.Equal(t, DataSchema, ce["dataschema"])
	data, err := base64.StdEncoding.DecodeString(ce["data_base64"].(string))
	require.NoError(t, err)
	require.Equal(t, doc, data, "data is the document byte for byte")

	// A delete is an event of its own type, without data.
	_, err = w.Deliver(context.Background(), Event{Op: OpDelete, AIBOM: e.AIBOM, Subject: e.Subject, SHA256: sha})
	require.NoError(t, err)
	g = <-ch
	require.NoError(t, json.Unmarshal(g.body, &ce))
	require.Equal(t, EventTypeDeleted, ce["type"])
	require.Equal(t, "deleted:uid-1:"+sha, ce["id"])
}

func TestWebhookClassifiesFailures(t *testing.T) {
	code := http.StatusServiceUnavailable
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
	defer srv.Close()
	c, err := NewHTTPClient(ClientOptions{CABundle: pemOf(srv.Certificate()), Destinations: loopback})
	require.NoError(t, err)
	w := &Webhook{SinkName: "hook", URL: srv.URL, Client: c}
	e := Event{Op: OpWrite, Document: []byte(`{}`), Subject: Subject{Kind: "Deployment", Name: "n"}}
	_, err = w.Deliver(context.Background(), e)
	require.Error(t, err)
	require.False(t, IsPermanent(err), "503 is transient")
	code = http.StatusUnauthorized
	_, err = w.Deliver(context.Background(), e)
	require.True(t, IsPermanent(err), "401 is permanent")

	// An endpoint whose certificate the configured CA did not sign is
	// refused, and not retried.
	other, err := NewHTTPClient(ClientOptions{Destinations: loopback})
	require.NoError(t, err)
	_, err = (&Webhook{SinkName: "hook", URL: srv.URL, Client: other}).Deliver(context.Background(), e)
	require.True(t, IsPermanent(err), "%v", err)
}

func TestWebhookPresentsItsClientCertificate(t *testing.T) {
	// mTLS: the server requires a client certificate signed by the CA it
	// trusts; the httptest server's own certificate serves as both.
	ca, err := testpki.NewCA()
	require.NoError(t, err)
	serverCert, _, _, err := ca.Issue("server")
	require.NoError(t, err)
	clientCert, _, _, err := ca.Issue("aibom-controller")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "aibom-controller" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}
	srv.StartTLS()
	defer srv.Close()
	// Without the client certificate the handshake fails.
	plain, err := NewHTTPClient(ClientOptions{CABundle: ca.PEM, Destinations: loopback})
	require.NoError(t, err)
	_, err = (&Webhook{SinkName: "m", URL: srv.URL, Client: plain}).Deliver(context.Background(), Event{Op: OpWrite, Document: []byte(`{}`)})
	require.Error(t, err)
	c, err := NewHTTPClient(ClientOptions{CABundle: ca.PEM, ClientCert: &clientCert, Destinations: loopback})
	require.NoError(t, err)
	_, err = (&Webhook{SinkName: "m", URL: srv.URL, Client: c}).Deliver(context.Background(), Event{Op: OpWrite, Document: []byte(`{}`)})
	require.NoError(t, err)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// loopback opts the tests' receivers on 127.0.0.1 in, as an AIBOMConfig's
// spec.allowedDestinations would.
var loopback = &Destinations{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
