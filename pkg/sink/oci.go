package sink

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/aibom-dev/aibom/api/v1alpha1"
)

// Annotations of the referrer manifests the OCI sink pushes.
const (
	AnnotationSubject = "dev.aibom.subject"
	AnnotationSHA256  = "dev.aibom.document.sha256"
)

// OCI attaches each document as an OCI referrer (an image manifest with
// artifactType application/vnd.cyclonedx+json, one layer holding the
// document, and the image as its subject; see Referrer) to every image digest
// the workload runs, in that image's repository. The manifest is
// deterministic: the same document attached to the same image is the same
// manifest, so a redelivery pushes nothing new. A delete leaves the
// referrers in place: each describes the image as it ran.
type OCI struct {
	SinkName string
	// Keychain supplies registry credentials (anonymous when nil).
	Keychain authn.Keychain
	// Transport carries the requests (TLS roots); default
	// remote.DefaultTransport.
	Transport http.RoundTripper
	// Insecure lists registries (host[:port]) spoken to over plain HTTP.
	Insecure map[string]bool
	// Repositories are the repositories referrers may be pushed to; an
	// image in any other repository gets none. Empty: none at all. The
	// sink's credential is the controller's, not the workload's: without
	// this boundary a tenant could attach documents to another team's
	// images just by running them.
	Repositories []RepositoryGrant
}

// RepositoryGrant allows referrers in the repositories under a prefix, for
// the workloads of some namespaces.
type RepositoryGrant struct {
	// Prefix is "registry[:port]/path": it matches the repository itself
	// and those below it (at a "/"), never "registry/pathx".
	Prefix string
	// Namespaces limits the grant to workloads of these namespaces; empty:
	// every namespace.
	Namespaces []string
}

// Name implements Sink.
func (o *OCI) Name() string { return o.SinkName }

// Partitions implements Partitioned: the registries of the event's images,
// so that a registry that does not answer holds one worker only.
func (o *OCI) Partitions(ev Event) []string {
	var out []string
	for _, img := range ev.Images {
		if reg, _, ok := strings.Cut(img, "/"); ok && !slices.Contains(out, reg) {
			out = append(out, reg)
		}
	}
	return out
}

// Allows reports whether a referrer of a workload of namespace may be
// pushed into repo ("registry/path", normalised).
func (o *OCI) Allows(namespace, repo string) bool {
	for _, g := range o.Repositories {
		p := strings.TrimSuffix(g.Prefix, "/")
		if p == "" || (repo != p && !strings.HasPrefix(repo, p+"/")) {
			continue
		}
		if len(g.Namespaces) == 0 || slices.Contains(g.Namespaces, namespace) {
			return true
		}
	}
	return false
}

// Deliver implements Sink. Images in repositories the sink does not allow
// for the workload's namespace get no referrer; the delivery then fails
// permanently (RepositoryNotAllowed) after attaching to the others.
func (o *OCI) Deliver(ctx context.Context, ev Event) (Receipt, error) {
	if ev.Op != OpWrite {
		return Receipt{}, nil
	}
	var locs, refused []string
	for _, img := range ev.Images {
		repo, _, _ := strings.Cut(img, "@")
		if !o.Allows(ev.AIBOM.Namespace, repo) {
			refused = append(refused, repo)
			continue
		}
		loc, err := o.attach(ctx, ev, img)
		if err != nil {
			return Receipt{}, err
		}
		locs = append(locs, loc)
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		refused = slices.Compact(refused)
		return Receipt{}, Permanent(v1alpha1.ReasonRepositoryNotAllowed, fmt.Errorf(
			"repository %s is outside the sink's allowed repositories for namespace %s (spec.sinks[].oci.repositories); %d of %d image(s) got the referrer",
			strings.Join(refused, ", "), ev.AIBOM.Namespace, len(locs), len(ev.Images)))
	}
	switch len(locs) {
	case 0:
		return Receipt{Location: "(no running image digest to attach to)"}, nil
	case 1:
		return Receipt{Location: locs[0]}, nil
	}
	return Receipt{Location: fmt.Sprintf("%s (+%d more)", locs[0], len(locs)-1)}, nil
}

// rawManifest is a manifest to PUT as it is.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// Referrer builds the referrer manifest of a document for an image
// manifest descriptor, and returns it with its digest. The manifest sets
// artifactType (OCI 1.1) and also uses the document as its config blob,
// with the CycloneDX media type: registries and clients that derive the
// artifact type from the config's media type (as before OCI 1.1, and
// go-containerregistry's registry) see the same type.
func Referrer(doc []byte, subject v1.Descriptor, annotations map[string]string) ([]byte, v1.Hash, error) {
	docDigest, _ := static.NewLayer(doc, MediaType).Digest()
	docDesc := v1.Descriptor{MediaType: MediaType, Size: int64(len(doc)), Digest: docDigest}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  MediaType,
		Config:        docDesc,
		Layers:        []v1.Descriptor{docDesc},
		Subject:       &v1.Descriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest},
		Annotations:   annotations,
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	sum := sha256.Sum256(raw)
	return raw, v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}, nil
}

func (o *OCI) attach(ctx context.Context, ev Event, img string) (string, error) {
	var nopts []name.Option
	if reg, _, ok := strings.Cut(img, "/"); ok && o.Insecure[reg] {
		nopts = append(nopts, name.Insecure)
	}
	ref, err := name.NewDigest(img, nopts...)
	if err != nil {
		return "", Permanent("InvalidImageReference", fmt.Errorf("image %s: %w", strconv.QuoteToASCII(img), err))
	}
	keychain := o.Keychain
	if keychain == nil {
		keychain = authn.NewMultiKeychain() // anonymous
	}
	tr := o.Transport
	if tr == nil {
		dt, err := NewTransport(ClientOptions{})
		if err != nil {
			return "", err
		}
		tr = dt
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain), remote.WithTransport(tr),
		// The dispatcher retries, with its own backoff and budget.
		remote.WithRetryBackoff(remote.Backoff{Steps: 1})}
	subject, err := remote.Head(ref, ropts...)
	if err != nil {
		return "", registryError("HEAD "+ref.String(), err)
	}
	raw, dgst, err := Referrer(ev.Document, *subject, map[string]string{
		AnnotationSubject: ev.AIBOM.Namespace + "/" + ev.Subject.Kind + "/" + ev.Subject.Name,
		AnnotationSHA256:  ev.SHA256,
	})
	if err != nil {
		return "", Permanent("InvalidManifest", err)
	}
	if err := remote.WriteLayer(ref.Context(), static.NewLayer(ev.Document, MediaType), ropts...); err != nil {
		return "", registryError("upload blob to "+ref.Context().String(), err)
	}
	target := ref.Context().Digest(dgst.String())
	if err := remote.Put(target, rawManifest{raw: raw, mt: types.OCIManifestSchema1}, ropts...); err != nil {
		return "", registryError("put referrer "+target.String(), err)
	}
	return target.String(), nil
}

// registryError classifies a registry failure by its HTTP status (see
// HTTPStatus); one without a status (unreachable) is transient.
func registryError(what string, err error) error {
	var te *transport.Error
	if errors.As(err, &te) {
		// The code only: the registry's diagnostics are its reply.
		if cls := HTTPStatus(te.StatusCode); IsPermanent(cls) {
			return Permanent(fmt.Sprintf("HTTP%d", te.StatusCode), fmt.Errorf("%s: %w", what, &StatusError{Code: te.StatusCode}))
		}
		return fmt.Errorf("%s: %w", what, &StatusError{Code: te.StatusCode})
	}
	return transportError(what, err)
}

// DockerConfigKeychain reads registry credentials from the content of a
// kubernetes.io/dockerconfigjson Secret (its .dockerconfigjson key).
func DockerConfigKeychain(dockerConfigJSON []byte) (authn.Keychain, error) {
	var cfg struct {
		Auths map[string]authn.AuthConfig `json:"auths"`
	}
	if err := json.Unmarshal(dockerConfigJSON, &cfg); err != nil {
		return nil, fmt.Errorf("not a docker config JSON: %w", err)
	}
	return dockerKeychain(cfg.Auths), nil
}

type dockerKeychain map[string]authn.AuthConfig

func (k dockerKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	reg := r.RegistryStr()
	for _, key := range []string{reg, "https://" + reg, "http://" + reg, "https://" + reg + "/v1/", "https://" + reg + "/v2/"} {
		if c, ok := k[key]; ok {
			return authn.FromConfig(c), nil
		}
	}
	if reg == name.DefaultRegistry {
		if c, ok := k["https://index.docker.io/v1/"]; ok {
			return authn.FromConfig(c), nil
		}
	}
	return authn.Anonymous, nil
}
