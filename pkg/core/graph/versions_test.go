package graph

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// countingDiscovery answers from lists, counting what it was asked; whole is
// what the whole of discovery returns as its error.
type countingDiscovery struct {
	discovery.DiscoveryInterface
	lists     []*metav1.APIResourceList
	whole     error
	wholeAsks int
	gvAsks    []string
}

func (d *countingDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	d.wholeAsks++
	if d.whole != nil && !discovery.IsGroupDiscoveryFailedError(d.whole) {
		return nil, nil, d.whole
	}
	var failed map[schema.GroupVersion]error
	var partial *discovery.ErrGroupDiscoveryFailed
	if errors.As(d.whole, &partial) {
		failed = partial.Groups
	}
	var out []*metav1.APIResourceList
	for _, l := range d.lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		if _, ok := failed[gv]; !ok {
			out = append(out, l)
		}
	}
	return nil, out, d.whole
}

func (d *countingDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	d.gvAsks = append(d.gvAsks, gv)
	for _, l := range d.lists {
		if l.GroupVersion == gv {
			return l, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
}

func versionsEntry(group, kind, resource string, versions ...string) Entry {
	return Entry{Kind: adapter.Kind{Group: group, Kind: kind, Resource: resource, Versions: versions}}
}

func TestServedVersionsAsksForTheWholeOfDiscoveryOnce(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment"}, {Name: "deployments/status", Kind: "Deployment"}}},
		{GroupVersion: "leaderworkerset.x-k8s.io/v1", APIResources: []metav1.APIResource{{Name: "leaderworkersets", Kind: "LeaderWorkerSet"}}},
		{GroupVersion: "nvidia.com/v1beta1", APIResources: []metav1.APIResource{{Name: "dynamographdeployments", Kind: "DynamoGraphDeployment"}}},
	}
	deploy := versionsEntry("apps", "Deployment", "deployments", "v1")
	lws := versionsEntry("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "leaderworkersets", "v1")
	dgd := versionsEntry("nvidia.com", "DynamoGraphDeployment", "dynamographdeployments", "v1alpha1", "v1beta1")
	ray := versionsEntry("ray.io", "RayCluster", "rayclusters", "v1")
	check := func(t *testing.T, s *ServedVersions) {
		t.Helper()
		for _, tc := range []struct {
			e       Entry
			version string
			ok      bool
		}{{deploy, "v1", true}, {lws, "v1", true}, {dgd, "v1beta1", true}, {ray, "", false}} {
			v, ok, err := s.Preferred(tc.e)
			require.NoError(t, err, tc.e.Kind.Kind)
			require.Equal(t, tc.version, v, tc.e.Kind.Kind)
			require.Equal(t, tc.ok, ok, tc.e.Kind.Kind)
		}
	}

	t.Run("the whole answers", func(t *testing.T) {
		d := &countingDiscovery{lists: lists}
		s := &ServedVersions{Discovery: d}
		check(t, s)
		require.Equal(t, 1, d.wholeAsks)
		require.Empty(t, d.gvAsks, "nothing asked one by one: an unlisted group-version is not served")
		// Absent: in no served version of its group, whatever the
		// adapter's versions; a kind served in another version exists.
		require.True(t, s.Absent(ray), "a group the cluster does not serve")
		require.True(t, s.Absent(versionsEntry("apps", "Widget", "widgets", "v1")), "a kind its served group does not list")
		require.False(t, s.Absent(deploy))
		require.False(t, s.Absent(versionsEntry("nvidia.com", "DynamoGraphDeployment", "dynamographdeployments", "v1alpha1")), "served in a version the adapter does not name: its objects exist")
	})
	t.Run("a group fails", func(t *testing.T) {
		gv := schema.GroupVersion{Group: "leaderworkerset.x-k8s.io", Version: "v1"}
		d := &countingDiscovery{lists: lists, whole: &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{gv: errors.New("stale")}}}
		s := &ServedVersions{Discovery: d}
		check(t, s)
		require.Equal(t, []string{"leaderworkerset.x-k8s.io/v1"}, d.gvAsks, "only the failed group-version is asked again")
		require.False(t, s.Absent(versionsEntry("leaderworkerset.x-k8s.io", "Other", "others", "v1")), "a group whose discovery failed is not known absent")
	})
	t.Run("the whole fails", func(t *testing.T) {
		d := &countingDiscovery{lists: lists, whole: errors.New("connection refused")}
		s := &ServedVersions{Discovery: d}
		check(t, s)
		require.Equal(t, []string{"apps/v1", "leaderworkerset.x-k8s.io/v1", "nvidia.com/v1alpha1", "nvidia.com/v1beta1", "ray.io/v1"}, d.gvAsks, "one by one, as before")
		require.False(t, s.Absent(ray), "without the whole of discovery nothing is known absent")
	})
}
