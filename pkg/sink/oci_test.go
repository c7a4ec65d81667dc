package sink

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

func TestOCIAttachesTheDocumentAsAReferrerOfEachRunningImage(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true)))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	img, err := random.Image(256, 1)
	require.NoError(t, err)
	tag, err := name.NewTag(host+"/models/vllm:v1", name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(tag, img))
	dg, err := img.Digest()
	require.NoError(t, err)

	tr, err := NewTransport(ClientOptions{Destinations: loopback})
	require.NoError(t, err)
	o := &OCI{SinkName: "oci", Insecure: map[string]bool{host: true}, Transport: tr, Repositories: []RepositoryGrant{{Prefix: host + "/models"}}}
	doc := []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","serialNumber":"x"}`)
	e := Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: "team", Name: "deployment-vllm"}, Subject: Subject{Kind: "Deployment", Name: "vllm"},
		Document: doc, SHA256: "d0c", Images: []string{host + "/models/vllm@" + dg.String()}}
	rec, err := o.Deliver(context.Background(), e)
	require.NoError(t, err)
	require.Contains(t, rec.Location, host+"/models/vllm@sha256:")
	// Redelivery is idempotent: the same manifest.
	rec2, err := o.Deliver(context.Background(), e)
	require.NoError(t, err)
	require.Equal(t, rec.Location, rec2.Location)

	// The registry's referrers API lists exactly one CycloneDX referrer.
	subject, err := name.NewDigest(host+"/models/vllm@"+dg.String(), name.Insecure)
	require.NoError(t, err)
	idx, err := remote.Referrers(subject)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 1)
	require.Equal(t, MediaType, im.Manifests[0].ArtifactType)
	require.Equal(t, rec.Location, host+"/models/vllm@"+im.Manifests[0].Digest.String())

	// The referrer's layer is the document, byte for byte.
	ref, err := name.NewDigest(rec.Location, name.Insecure)
	require.NoError(t, err)
	art, err := remote.Image(ref)
	require.NoError(t, err)
	m, err := art.Manifest()
	require.NoError(t, err)
	require.Equal(t, dg, m.Subject.Digest)
	require.Equal(t, "team/Deployment/vllm", m.Annotations[AnnotationSubject])
	layers, err := art.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Compressed()
	require.NoError(t, err)
	got, _ := io.ReadAll(rc)
	require.Equal(t, doc, got)

	// An image that does not exist is refused permanently (404).
	missing := Event{Op: OpWrite, Document: doc, Images: []string{host + "/models/vllm@sha256:" + strings.Repeat("0", 64)}, AIBOM: e.AIBOM}
	_, err = o.Deliver(context.Background(), missing)
	require.True(t, IsPermanent(err), "%v", err)
}

func TestDockerConfigKeychain(t *testing.T) {
	kc, err := DockerConfigKeychain([]byte(`{"auths":{"registry.example:5000":{"username":"u","password":"p"}}}`))
	require.NoError(t, err)
	reg, _ := name.NewRegistry("registry.example:5000")
	a, err := kc.Resolve(reg)
	require.NoError(t, err)
	cfg, err := a.Authorization()
	require.NoError(t, err)
	require.Equal(t, "u", cfg.Username)
	other, _ := name.NewRegistry("elsewhere.example")
	a, err = kc.Resolve(other)
	require.NoError(t, err)
	require.Equal(t, authn.Anonymous, a)
	_, err = DockerConfigKeychain([]byte(`not json`))
	require.Error(t, err)
	_ = v1.Hash{}
}

func TestOCIPushesReferrersOnlyIntoAllowedRepositories(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true)))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	var digests []string
	for _, repo := range []string{"team-a/model", "team-ab/model", "team-b/model"} {
		img, err := random.Image(128, 1)
		require.NoError(t, err)
		tag, err := name.NewTag(host+"/"+repo+":v1", name.Insecure)
		require.NoError(t, err)
		require.NoError(t, remote.Write(tag, img))
		dg, err := img.Digest()
		require.NoError(t, err)
		digests = append(digests, host+"/"+repo+"@"+dg.String())
	}
	referrers := func(img string) int {
		subject, err := name.NewDigest(img, name.Insecure)
		require.NoError(t, err)
		idx, err := remote.Referrers(subject)
		require.NoError(t, err)
		im, err := idx.IndexManifest()
		require.NoError(t, err)
		return len(im.Manifests)
	}
	tr, err := NewTransport(ClientOptions{Destinations: loopback})
	require.NoError(t, err)
	doc := []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`)
	in := func(ns string, images ...string) Event {
		return Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: ns, Name: "deployment-x"}, Subject: Subject{Kind: "Deployment", Name: "x"},
			Document: doc, SHA256: "s", Images: images}
	}

	// Default: no repository at all.
	none := &OCI{SinkName: "oci", Insecure: map[string]bool{host: true}, Transport: tr}
	_, err = none.Deliver(context.Background(), in("team-a", digests[0]))
	require.True(t, IsPermanent(err))
	require.Equal(t, "RepositoryNotAllowed", reasonOf(err))
	require.Zero(t, referrers(digests[0]))

	o := &OCI{SinkName: "oci", Insecure: map[string]bool{host: true}, Transport: tr, Repositories: []RepositoryGrant{
		{Prefix: host + "/team-a", Namespaces: []string{"team-a"}},
	}}
	// team-a's workload, its own image: attached.
	_, err = o.Deliver(context.Background(), in("team-a", digests[0]))
	require.NoError(t, err)
	require.Equal(t, 1, referrers(digests[0]))
	// A prefix matches at a "/" only: team-ab is outside; another team's
	// image run by team-a gets nothing, and team-a's own still gets it.
	_, err = o.Deliver(context.Background(), in("team-a", digests[0], digests[1], digests[2]))
	require.Equal(t, "RepositoryNotAllowed", reasonOf(err))
	require.Contains(t, err.Error(), host+"/team-ab/model, "+host+"/team-b/model")
	require.Zero(t, referrers(digests[1]))
	require.Zero(t, referrers(digests[2]))
	// Another namespace may not push into team-a's repositories.
	_, err = o.Deliver(context.Background(), in("team-b", digests[0]))
	require.Equal(t, "RepositoryNotAllowed", reasonOf(err))
	require.Contains(t, err.Error(), "namespace team-b")
}
