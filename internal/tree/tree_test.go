package tree

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/adapters/intree"
	"github.com/aibom-dev/aibom/internal/scan"
	"github.com/aibom-dev/aibom/pkg/core/document"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/tree -update to create it")
	require.Equal(t, string(want), got, "output differs from %s (go test ./internal/tree -update rewrites it)", path)
}

// forest builds the forest of manifests as "aibom tree" does.
func forest(t *testing.T, paths ...string) Forest {
	t.Helper()
	adapters, err := intree.Select("all")
	require.NoError(t, err)
	reg, err := graph.NewRegistry(adapters...)
	require.NoError(t, err)
	snap, err := scan.LoadFiles(reg, scan.FileOptions{Paths: paths})
	require.NoError(t, err)
	store := graph.NewMemoryStore(snap.Objects)
	roots, err := scan.Evaluate(context.Background(), reg, store, scan.Options{Tool: document.Tool{Name: "test", Version: "test"}})
	require.NoError(t, err)
	return Build(context.Background(), reg, store, snap.Objects, roots)
}

// find returns the node labelled "Kind/name" anywhere in the forest.
func find(f Forest, label string) *Node {
	var walk func(nodes []*Node) *Node
	walk = func(nodes []*Node) *Node {
		for _, n := range nodes {
			if n.Label() == label {
				return n
			}
			if m := walk(n.Children); m != nil {
				return m
			}
		}
		return nil
	}
	if n := walk(f.Roots); n != nil {
		return n
	}
	return walk(f.Outside)
}

// A Dynamo graph on the Grove path, and a multi-node LeaderWorkerSet: the
// Grove kinds are walk-only intermediates between the graph and its pods;
// the LWS absorbs its StatefulSets, the workers' one through the leader pod.
func TestGroveGraphAndLWSChain(t *testing.T) {
	f := forest(t, "testdata/grove.yaml", "../scan/testdata/manifests/lws.yaml")
	var out bytes.Buffer
	require.NoError(t, WriteText(&out, f))
	golden(t, "grove-lws.txt", out.String())

	require.Len(t, f.Roots, 2)
	require.Empty(t, f.Outside)
	graph := f.Roots[0]
	require.Equal(t, "DynamoGraphDeployment/vllm-disagg", graph.Label())
	require.Equal(t, RoleRoot, graph.Role)
	pcs := graph.Children[0]
	require.Equal(t, "PodCliqueSet/vllm-disagg", pcs.Label())
	require.Equal(t, RoleWalkOnly, pcs.Role)

	worker := find(f, "Pod/vllm-disagg-0-decode-0-decode-wkr-b7c2d")
	require.Equal(t, RolePod, worker.Role)
	require.Equal(t, []Container{{Name: "main", Digest: "sha256:8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d8c7d6e5f4a3b2c1d"}}, worker.Containers)
	leader := find(f, "Pod/vllm-disagg-0-decode-0-decode-ldr-m4q8z")
	require.Equal(t, []Container{{Name: "main"}}, leader.Containers, "still pulling: no digest")
	require.Contains(t, leader.Why, "main pulling")

	workers := find(f, "StatefulSet/sglang-mn-0")
	require.Equal(t, RoleAbsorbed, workers.Role)
	require.Equal(t, "tracked owner StatefulSet/sglang-mn found (2 hops)", workers.Why, "through the leader pod")
}

func TestDot(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, WriteDot(&out, forest(t, "testdata/grove.yaml")))
	golden(t, "grove.dot", out.String())
}

// Every node says why it is, or is not, a root.
func TestReasons(t *testing.T) {
	f := forest(t, "testdata/reasons.yaml")
	for _, tc := range []struct {
		label string
		role  Role
		why   string
	}{
		{"Deployment/served", RoleAbsorbed, "generic root ModelServer.example.com/ms, a kind no enabled adapter tracks (1 hop)"},
		{"StatefulSet/stale", RoleRoot, "the LeaderWorkerSet.leaderworkerset.x-k8s.io its controller reference names has another UID (UID mismatch: a re-created owner)"},
		{"LeaderWorkerSet/lws", RoleRoot, "no controller owner"},
		{"Deployment/top", RoleRoot, "no controller owner"},
		{"ReplicaSet/r6", RoleWalkOnly, "walk-only kind (adapter apps): passes ownership up"},
		{"StatefulSet/deep", RoleRoot, "more than 6 ownerReference hops without a tracked owner (depth cap)"},
		{"ReplicaSet/r7", RoleOutside, "under no root: more than 6 ownerReference hops without a tracked owner (depth cap)"},
		{"ReplicaSet/lost", RoleOutside, "under no root: its controller, a Deployment.apps, is not there (not found)"},
		{"Pod/claimant", RoleUnattributed, "its controller, a Deployment, is not how Deployment/top runs pods: digests not counted"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			n := find(f, tc.label)
			require.NotNil(t, n)
			require.Equal(t, tc.role, n.Role)
			require.Equal(t, tc.why, n.Why)
		})
	}
	require.Len(t, find(f, "ReplicaSet/r6").Children, 0, "r7 is past the depth cap: not under the Deployment")
}

// Names from a manifest cannot forge tree rows or DOT statements.
func TestHostileNames(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.yaml")
	require.NoError(t, os.WriteFile(p, []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: "web\"]; evil [label=\"x\nforged\u001b[2J"}
spec:
  template:
    spec: {containers: [{name: c, image: "vllm/vllm-openai:v0.6.3"}]}
`), 0o644))
	f := forest(t, p)
	var text, dot bytes.Buffer
	require.NoError(t, WriteText(&text, f))
	require.NotContains(t, text.String(), "\x1b")
	require.Equal(t, 2, strings.Count(text.String(), "\n"), "a header and one row")
	require.NoError(t, WriteDot(&dot, f))
	require.NotContains(t, dot.String(), "\x1b")
	require.Contains(t, dot.String(), `n0 [label="default/Deployment/web\"]; evil [label=\"x\nforged[2J\nroot", style=bold, penwidth=2];`)
}
