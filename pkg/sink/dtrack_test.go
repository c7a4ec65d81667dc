package sink

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/dtracktest"
)

func TestDependencyTrackUploadsOneProjectPerWorkloadUnderItsNamespace(t *testing.T) {
	fake := dtracktest.NewServer("api-key")
	srv := httptest.NewTLSServer(fake)
	defer srv.Close()
	c, err := NewHTTPClient(ClientOptions{CABundle: pemOf(srv.Certificate()), Destinations: loopback})
	require.NoError(t, err)
	d := &DependencyTrack{SinkName: "dt", BaseURL: srv.URL, Client: c, APIKey: "api-key", Cluster: "prod"}
	doc := []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`)
	e := Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: "team", Name: "deployment-vllm"}, Subject: Subject{Kind: "Deployment", Name: "vllm"}, Document: doc, SHA256: "s"}
	rec, err := d.Deliver(context.Background(), e)
	require.NoError(t, err)
	require.Empty(t, fake.Violations)
	require.Contains(t, rec.Location, "/api/v1/project/lookup?name=prod%2Fteam%2FDeployment%2Fvllm&version=live")
	require.Equal(t, doc, fake.BOMs["prod/team/Deployment/vllm"])
	require.Equal(t, "prod/team@live", fake.Parents["prod/team/Deployment/vllm"])
	require.Equal(t, "prod@live", fake.Parents["prod/team"], "the namespace's project sits under the cluster's")
	// Idempotent: a redelivery uploads again into the same project.
	_, err = d.Deliver(context.Background(), e)
	require.NoError(t, err)
	require.Len(t, fake.Projects, 3)
	// A delete deletes the workload's project, not its parents.
	_, err = d.Deliver(context.Background(), Event{Op: OpDelete, AIBOM: e.AIBOM, Subject: e.Subject})
	require.NoError(t, err)
	require.Equal(t, []string{"prod/team/Deployment/vllm@live"}, fake.Deleted)
	require.Empty(t, fake.Violations)

	// A wrong key is refused, permanently.
	_, err = (&DependencyTrack{SinkName: "dt", BaseURL: srv.URL, Client: c, APIKey: "wrong", Parent: v1alpha1.ParentCluster}).Deliver(context.Background(), e)
	require.True(t, IsPermanent(err), "%v", err)
}

func TestDependencyTrackClusterParent(t *testing.T) {
	fake := dtracktest.NewServer("k")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	d := &DependencyTrack{SinkName: "dt", BaseURL: srv.URL, Client: http.DefaultClient, APIKey: "k", Parent: v1alpha1.ParentCluster}
	_, err := d.Deliver(context.Background(), Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: "a", Name: "x"}, Subject: Subject{Kind: "Job", Name: "x"}, Document: []byte(`{}`), SHA256: "s"})
	require.NoError(t, err)
	require.Empty(t, fake.Violations)
	require.Equal(t, "cluster@live", fake.Parents["cluster/a/Job/x"])
}
