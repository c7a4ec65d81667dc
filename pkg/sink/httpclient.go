package sink

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aibom-dev/aibom/pkg/adapter/podtemplate"
)

// TLSOptions are the TLS settings of a sink's HTTP client.
type TLSOptions struct {
	// CABundle is PEM; empty: the system's roots.
	CABundle []byte
	// ClientCert is presented for mutual TLS; nil: none.
	ClientCert *tls.Certificate
}

// NewHTTPClient returns an HTTP client for a sink: TLS 1.2 or later with the
// given roots and client certificate, no redirects (a redirect could carry
// the credentials elsewhere), no overall timeout (each attempt has its
// deadline).
func NewHTTPClient(o TLSOptions) (*http.Client, error) {
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
	tr.Proxy = http.ProxyFromEnvironment
	tr.ResponseHeaderTimeout = time.Minute
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// maxErrorBody bounds what of a refusal's body is quoted in a status.
const maxErrorBody = 256

// readError classifies a response: nil for 2xx; otherwise an error quoting
// the start of the body, redacted (a receiver may echo a credential).
func readError(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	body, _ := podtemplate.Redact(strings.ToValidUTF8(strings.TrimSpace(string(b)), "?"))
	return HTTPStatus(resp.StatusCode, body)
}

// drain reads and closes a response body so that the connection is reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}

// transportError wraps a request error; it is transient (the receiver may be
// back on the next attempt) unless it is a TLS verification failure.
func transportError(what string, err error) error {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &certErr) {
		return Permanent("TLSVerificationFailed", fmt.Errorf("%s: %w", what, err))
	}
	return fmt.Errorf("%s: %w", what, err)
}
