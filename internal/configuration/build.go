package configuration

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/pkg/sink"
)

// secretReader reads the Secrets sinks name, by name, in the controller's
// namespace: a direct GET each (no list, no watch, no cache), so that the
// install can grant get on exactly those resourceNames.
type secretReader struct {
	reader    client.Reader
	namespace string
}

// sinkError is a sink that cannot be built, with the reason for its
// condition.
type sinkError struct {
	reason string
	err    error
}

func (e *sinkError) Error() string { return e.err.Error() }

func (s secretReader) key(ctx context.Context, ref v1alpha1.SecretKeyRef) ([]byte, error) {
	data, err := s.secret(ctx, ref.Name)
	if err != nil {
		return nil, err
	}
	v, ok := data[ref.Key]
	if !ok || len(v) == 0 {
		return nil, &sinkError{v1alpha1.ConfigReasonSecretUnavailable, fmt.Errorf("secret %s/%s has no key %q", s.namespace, ref.Name, ref.Key)}
	}
	return v, nil
}

func (s secretReader) secret(ctx context.Context, name string) (map[string][]byte, error) {
	sec := &corev1.Secret{}
	if err := s.reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: name}, sec); err != nil {
		why := "cannot be read"
		switch {
		case apierrors.IsNotFound(err):
			why = "does not exist"
		case apierrors.IsForbidden(err):
			why = "is not readable by the controller: grant get on it by resourceName (docs/sinks.md)"
		}
		return nil, &sinkError{v1alpha1.ConfigReasonSecretUnavailable, fmt.Errorf("secret %s/%s %s", s.namespace, name, why)}
	}
	return sec.Data, nil
}

// SecretNames lists the Secrets a configuration's sinks name, sorted: what
// the install must grant get on (in the controller's namespace).
func SecretNames(spec v1alpha1.AIBOMConfigSpec) []string {
	seen := map[string]bool{}
	for _, s := range spec.Sinks {
		switch {
		case s.Webhook != nil:
			for _, r := range []*v1alpha1.SecretKeyRef{s.Webhook.BearerToken, s.Webhook.SigningKey} {
				if r != nil {
					seen[r.Name] = true
				}
			}
			if s.Webhook.ClientCertificate != nil {
				seen[s.Webhook.ClientCertificate.Name] = true
			}
		case s.DependencyTrack != nil:
			seen[s.DependencyTrack.APIKey.Name] = true
		case s.OCI != nil && s.OCI.Credentials != nil:
			seen[s.OCI.Credentials.Name] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// destinations is the policy of a configuration's connections: its
// spec.allowedDestinations, and the API server's addresses refused.
func destinations(spec v1alpha1.AIBOMConfigSpec, apiServer []netip.Addr) (*sink.Destinations, error) {
	d := &sink.Destinations{APIServer: apiServer}
	for i, c := range spec.AllowedDestinations {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			if a, aerr := netip.ParseAddr(c); aerr == nil {
				p, err = a.Prefix(a.BitLen())
			}
		}
		if err != nil {
			return nil, fmt.Errorf("spec.allowedDestinations[%d]: not a CIDR prefix or an address", i)
		}
		d.Allowed = append(d.Allowed, p.Masked())
	}
	return d, nil
}

// checkURL refuses a sink URL that is not absolute with one of schemes,
// without quoting it (it may hold a secret).
func checkURL(field, raw string, schemes ...string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !slices.Contains(schemes, u.Scheme) {
		return &sinkError{v1alpha1.ConfigReasonSinkInvalid, fmt.Errorf("%s is not an absolute %s URL", field, strings.Join(schemes, " or "))}
	}
	return nil
}

// buildSinks builds every sink of a configuration. It returns one condition
// per sink; err is set when any sink could not be built (the configuration
// is then refused as a whole).
func buildSinks(ctx context.Context, secrets secretReader, spec v1alpha1.AIBOMConfigSpec, apiServer []netip.Addr) ([]sink.Sink, []metav1.Condition, error) {
	var out []sink.Sink
	var conds []metav1.Condition
	dest, err := destinations(spec, apiServer)
	if err != nil {
		return nil, nil, err
	}
	var firstErr error
	for _, s := range spec.Sinks {
		built, kind, err := buildSink(ctx, secrets, s, dest)
		cond := metav1.Condition{Type: v1alpha1.SinkConditionPrefix + s.Name, Status: metav1.ConditionTrue, Reason: v1alpha1.ConfigReasonSinkReady,
			Message: kind + " sink configured"}
		if err != nil {
			reason := v1alpha1.ConfigReasonSinkInvalid
			if se, ok := err.(*sinkError); ok {
				reason = se.reason
			}
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reason, err.Error()
			if firstErr == nil {
				firstErr = fmt.Errorf("sink %s: %w", s.Name, err)
			}
		} else {
			out = append(out, built)
		}
		conds = append(conds, cond)
	}
	return out, conds, firstErr
}

func buildSink(ctx context.Context, secrets secretReader, s v1alpha1.Sink, dest *sink.Destinations) (sink.Sink, string, error) {
	switch {
	case s.Webhook != nil:
		w := s.Webhook
		if err := checkURL("webhook.url", w.URL, "https"); err != nil {
			return nil, "webhook", err
		}
		o := sink.ClientOptions{CABundle: []byte(w.CABundle), Destinations: dest}
		if w.ClientCertificate != nil {
			data, err := secrets.secret(ctx, w.ClientCertificate.Name)
			if err != nil {
				return nil, "webhook", err
			}
			cert, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
			if err != nil {
				return nil, "webhook", &sinkError{v1alpha1.ConfigReasonSinkInvalid, fmt.Errorf("client certificate secret %s: %w", w.ClientCertificate.Name, err)}
			}
			o.ClientCert = &cert
		}
		c, err := sink.NewHTTPClient(o)
		if err != nil {
			return nil, "webhook", &sinkError{v1alpha1.ConfigReasonSinkInvalid, err}
		}
		out := &sink.Webhook{SinkName: s.Name, URL: w.URL, Client: c}
		if w.BearerToken != nil {
			t, err := secrets.key(ctx, *w.BearerToken)
			if err != nil {
				return nil, "webhook", err
			}
			out.BearerToken = string(t)
		}
		if w.SigningKey != nil {
			k, err := secrets.key(ctx, *w.SigningKey)
			if err != nil {
				return nil, "webhook", err
			}
			out.SigningKey = k
		}
		return out, "webhook", nil
	case s.DependencyTrack != nil:
		d := s.DependencyTrack
		if err := checkURL("dependencyTrack.url", d.URL, "https", "http"); err != nil {
			return nil, "dependencyTrack", err
		}
		c, err := sink.NewHTTPClient(sink.ClientOptions{CABundle: []byte(d.CABundle), Destinations: dest})
		if err != nil {
			return nil, "dependencyTrack", &sinkError{v1alpha1.ConfigReasonSinkInvalid, err}
		}
		key, err := secrets.key(ctx, d.APIKey)
		if err != nil {
			return nil, "dependencyTrack", err
		}
		return &sink.DependencyTrack{SinkName: s.Name, BaseURL: d.URL, Client: c, APIKey: string(key), Parent: d.Parent, Cluster: d.ClusterName}, "dependencyTrack", nil
	case s.OCI != nil:
		o := s.OCI
		c, err := sink.NewHTTPClient(sink.ClientOptions{CABundle: []byte(o.CABundle), Destinations: dest})
		if err != nil {
			return nil, "oci", &sinkError{v1alpha1.ConfigReasonSinkInvalid, err}
		}
		out := &sink.OCI{SinkName: s.Name, Transport: c.Transport, Insecure: map[string]bool{}}
		for _, r := range o.InsecureRegistries {
			out.Insecure[r] = true
		}
		for _, r := range o.Repositories {
			out.Repositories = append(out.Repositories, sink.RepositoryGrant{Prefix: r.Prefix, Namespaces: slices.Clone(r.Namespaces)})
		}
		if o.Credentials != nil {
			data, err := secrets.secret(ctx, o.Credentials.Name)
			if err != nil {
				return nil, "oci", err
			}
			kc, err := sink.DockerConfigKeychain(data[corev1.DockerConfigJsonKey])
			if err != nil {
				return nil, "oci", &sinkError{v1alpha1.ConfigReasonSinkInvalid, fmt.Errorf("credentials secret %s: %w", o.Credentials.Name, err)}
			}
			out.Keychain = kc
		}
		return out, "oci", nil
	}
	return nil, "", &sinkError{v1alpha1.ConfigReasonSinkInvalid, fmt.Errorf("no sink type set")}
}
