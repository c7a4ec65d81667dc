package sinks

import (
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/dtracktest"
	"github.com/aibom-dev/aibom/pkg/sink"
	"github.com/aibom-dev/aibom/test/envtest/harness"
)

// deploymentOn is a vLLM Deployment chain whose pod runs image at digest
// (hex), as a kubelet reports it.
func deploymentOn(name, image, digest string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: vllm, image: %[2]q, args: ["--model", "Qwen/Qwen2.5-0.5B"]}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: %[1]s-rs
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s, controller: true, blockOwnerDeletion: true}]
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: vllm, image: %[2]q}]}
---`, name, image) + harness.PodYAML(name+"-rs-p0", "apps/v1", "ReplicaSet", name+"-rs", "vllm", image, digest)
}

func TestOCISinkAttachesReferrersToTheRunningImage(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	img, err := random.Image(512, 1)
	require.NoError(t, err)
	tag, err := name.NewTag(host+"/vllm/vllm-openai:v0.6.3", name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(tag, img))
	dg, err := img.Digest()
	require.NoError(t, err)

	startController(t, fastDelivery())
	secret(t, "registry-creds", map[string][]byte{".dockerconfigjson": []byte(`{"auths":{"` + host + `":{"username":"u","password":"p"}}}`)})
	applyConfig(t, v1alpha1.AIBOMConfigSpec{Sinks: []v1alpha1.Sink{{Name: "registry", OCI: &v1alpha1.OCISink{
		Credentials: &v1alpha1.SecretRef{Name: "registry-creds"}, InsecureRegistries: []string{host},
		Repositories: []v1alpha1.OCIRepository{{Prefix: host + "/vllm"}},
	}}}, AllowedDestinations: loopbackDestinations})
	waitConfig(t, func(c *v1alpha1.AIBOMConfig) bool { return isTrueCond(c.Status.Conditions, "Ready") })
	ns := env.NewNamespace(t, "oci", true)
	env.MustApply(t, ns, deploymentOn("served", host+"/vllm/vllm-openai:v0.6.3", dg.Hex))
	key := harness.AIBOMKey(ns, deploymentGK, "served")
	// The pod's status may reach the controller after its spec: the first
	// document can name no running digest, and has no image to attach to.
	// Synced with a location: the referrer of the running image.
	var a *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		synced(t, key)
		a, _ = getAIBOM(key)
		return a != nil && len(a.Status.Sinks) == 1 && strings.HasPrefix(a.Status.Sinks[0].Location, host+"/vllm/vllm-openai@")
	}, eventually, tick, "the OCI sink attaches the document to the running image")

	// What crane/the registry API list for the image digest.
	subject, err := name.NewDigest(host+"/vllm/vllm-openai@"+dg.String(), name.Insecure)
	require.NoError(t, err)
	idx, err := remote.Referrers(subject)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 1)
	require.Equal(t, sink.MediaType, im.Manifests[0].ArtifactType)
	art, err := remote.Image(subject.Context().Digest(im.Manifests[0].Digest.String()))
	require.NoError(t, err)
	layers, err := art.Layers()
	require.NoError(t, err)
	rc, err := layers[0].Compressed()
	require.NoError(t, err)
	doc, _ := io.ReadAll(rc)
	require.Equal(t, a.Status.Document, string(doc), "the referrer holds the AIBOM's document")
}

func TestDependencyTrackSinkFollowsTheDocumentedAPI(t *testing.T) {
	fake := dtracktest.NewServer("dt-key")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	startController(t, fastDelivery())
	secret(t, "dtrack", map[string][]byte{"apiKey": []byte("dt-key")})
	applyConfig(t, v1alpha1.AIBOMConfigSpec{Sinks: []v1alpha1.Sink{{Name: "dtrack", DependencyTrack: &v1alpha1.DependencyTrackSink{
		URL: srv.URL, APIKey: v1alpha1.SecretKeyRef{Name: "dtrack", Key: "apiKey"}, ClusterName: "prod",
	}}}, AllowedDestinations: loopbackDestinations})
	waitConfig(t, func(c *v1alpha1.AIBOMConfig) bool { return isTrueCond(c.Status.Conditions, "Ready") })
	ns := env.NewNamespace(t, "dt", true)
	digest := harness.SHA256Hex("dt")
	env.MustApply(t, ns, harness.DeploymentChain("vllm", digest))
	key := harness.AIBOMKey(ns, deploymentGK, "vllm")
	// The pod's status may reach the controller after its spec: the first
	// document can name no running digest, and be delivered before the
	// second. Compared once the AIBOM is synced with the running digest.
	var a *v1alpha1.AIBOM
	require.Eventually(t, func() bool {
		got, ok := getAIBOM(key)
		if !ok || !isSynced(got) {
			return false
		}
		a = got
		return strings.Contains(a.Status.Document, digest)
	}, eventually, tick, "AIBOM %s never synced with the running digest", key)
	project := "prod/" + ns + "/Deployment/vllm"
	fake.Mu.Lock()
	require.Empty(t, fake.Violations)
	require.Equal(t, a.Status.Document, string(fake.BOMs[project]))
	require.Equal(t, "prod/"+ns+"@live", fake.Parents[project])
	fake.Mu.Unlock()

	// Deleting the workload deletes its AIBOM, and with it the project.
	require.NoError(t, env.Client.Delete(t.Context(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vllm"}}))
	require.Eventually(t, func() bool {
		fake.Mu.Lock()
		defer fake.Mu.Unlock()
		return slices.Contains(fake.Deleted, project+"@live")
	}, eventually, tick)
	fake.Mu.Lock()
	require.Empty(t, fake.Violations)
	fake.Mu.Unlock()
}
