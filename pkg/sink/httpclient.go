package sink

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// ClientOptions are the settings of a sink's HTTP client.
type ClientOptions struct {
	// CABundle is PEM; empty: the system's roots.
	CABundle []byte
	// ClientCert is presented for mutual TLS; nil: none.
	ClientCert *tls.Certificate
	// Destinations refuses connections to loopback, link-local and API
	// server addresses unless allowed; nil refuses them all.
	Destinations *Destinations
}

// NewHTTPClient returns an HTTP client for a sink: TLS 1.2 or later with the
// given roots and client certificate, connections only to the addresses
// Destinations allows (checked on the resolved address of each connection),
// no redirects (a redirect could carry the credentials elsewhere), no
// overall timeout (each attempt has its deadline).
func NewHTTPClient(o ClientOptions) (*http.Client, error) {
	tr, err := NewTransport(o)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// NewTransport is the transport of NewHTTPClient.
func NewTransport(o ClientOptions) (*http.Transport, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(o.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(o.CABundle) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if o.ClientCert != nil {
		cfg.Certificates = []tls.Certificate{*o.ClientCert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	// With a proxy from the environment the connection, and so the check,
	// is to the proxy (docs/sinks.md).
	tr.Proxy = http.ProxyFromEnvironment
	tr.ResponseHeaderTimeout = time.Minute
	tr.DialContext = o.Destinations.DialContext(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	return tr, nil
}

// readError classifies a response: nil for 2xx; otherwise an error with the
// status code and its class only. The body is never read into a message: a
// receiver (or whatever answers at a wrong address) could echo a credential
// or use the AIBOMs' statuses to publish its replies.
func readError(resp *http.Response) error {
	return HTTPStatus(resp.StatusCode)
}

// drain reads and closes a response body so that the connection is reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}

// transportError wraps a request error with what (which names the request
// by its redacted URL); it is transient (the receiver may be back on the
// next attempt) unless it is a TLS verification failure or a refused
// destination. The *url.Error the client returns quotes the URL in full:
// only its cause is kept.
func transportError(what string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var certErr *tls.CertificateVerificationError
	var destErr *DestinationError
	switch {
	case errors.As(err, &destErr):
		return Permanent(v1alpha1.ReasonDestinationRefused, fmt.Errorf("%s: %w", what, err))
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &certErr):
		return Permanent("TLSVerificationFailed", fmt.Errorf("%s: %w", what, err))
	}
	return fmt.Errorf("%s: %w", what, err)
}
