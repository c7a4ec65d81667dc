package adapter

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var table = []Kind{
	{Group: "example.com", Kind: "Server", Resource: "servers", Versions: []string{"v2", "v1"}, Role: RoleTracked},
	{Group: "example.com", Kind: "Shard", Resource: "shards", Versions: []string{"v1"}, Role: RoleWalkOnly},
}

func TestCloneKindsIsDeep(t *testing.T) {
	c := CloneKinds(table)
	require.Equal(t, table, c)
	c[0].Versions[0] = "v9"
	c[1].Kind = "Other"
	require.Equal(t, "v2", table[0].Versions[0])
	require.Equal(t, "Shard", table[1].Kind)
}

func TestTracks(t *testing.T) {
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Server"}, true},
		{schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Server"}, true},
		{schema.GroupVersionKind{Group: "example.com", Version: "v3", Kind: "Server"}, false},
		{schema.GroupVersionKind{Group: "other.com", Version: "v1", Kind: "Server"}, false},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Shard"}, false}, // walk-only
	} {
		require.Equal(t, tc.want, Tracks(table, tc.gvk), tc.gvk.String())
	}
}

func TestCloneKindsCopiesPodOwners(t *testing.T) {
	in := []Kind{{Group: "apps", Kind: "Deployment", Resource: "deployments", Versions: []string{"v1"}, Role: RoleTracked,
		PodOwners: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}}}
	c := CloneKinds(in)
	c[0].PodOwners[0].Kind = "Other"
	require.Equal(t, "ReplicaSet", in[0].PodOwners[0].Kind)
}

func TestPodOwnersDeclaration(t *testing.T) {
	base := Kind{Group: "apps", Kind: "Deployment", Resource: "deployments", Versions: []string{"v1"}, Role: RoleTracked}
	rs := schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	for _, tc := range []struct {
		name   string
		owners []schema.GroupKind
		role   Role
		err    string
	}{
		{name: "none", role: RoleTracked},
		{name: "replicaset", owners: []schema.GroupKind{rs}, role: RoleTracked},
		{name: "itself", owners: []schema.GroupKind{{Group: "apps", Kind: "Deployment"}}, role: RoleTracked},
		{name: "walk-only", owners: []schema.GroupKind{rs}, role: RoleWalkOnly, err: "only a tracked kind"},
		{name: "pod", owners: []schema.GroupKind{{Kind: "Pod"}}, role: RoleTracked, err: "Pod cannot be a pod owner"},
		{name: "twice", owners: []schema.GroupKind{rs, rs}, role: RoleTracked, err: "declared twice"},
		{name: "bad kind", owners: []schema.GroupKind{{Group: "apps", Kind: "replica set"}}, role: RoleTracked, err: "CamelCase"},
		{name: "bad group", owners: []schema.GroupKind{{Group: "Apps!", Kind: "ReplicaSet"}}, role: RoleTracked, err: "DNS subdomain"},
	} {
		k := base
		k.Role, k.PodOwners = tc.role, tc.owners
		err := k.Validate()
		if tc.err == "" {
			require.NoError(t, err, tc.name)
		} else {
			require.ErrorContains(t, err, tc.err, tc.name)
		}
	}

	k := base
	require.True(t, k.AcceptsPodOwner(schema.GroupKind{Group: "apps", Kind: "Deployment"}), "nothing declared: any owner")
	k.PodOwners = []schema.GroupKind{rs}
	require.True(t, k.AcceptsPodOwner(rs))
	require.False(t, k.AcceptsPodOwner(schema.GroupKind{Group: "apps", Kind: "Deployment"}))
}

func TestContainerValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		c   Container
		err string
	}{
		"written image":   {c: Container{Name: "vllm", Image: "vllm/vllm-openai:v0.6.3"}},
		"image from pods": {c: Container{Name: "server", ImageFromPods: true}},
		"no name":         {c: Container{Image: "nginx"}, err: "container without a name"},
		"neither":         {c: Container{Name: "server"}, err: `container "server" has no image`},
		"both":            {c: Container{Name: "server", Image: "nginx", ImageFromPods: true}, err: "sets both an image"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.err)
			}
		})
	}
}
