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
