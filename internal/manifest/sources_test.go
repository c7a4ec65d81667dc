package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestDecodeSourcesPositions(t *testing.T) {
	data := "# header\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---   \n\n# comment\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n---\n"
	srcs, err := DecodeSources("f.yaml", []byte(data))
	require.NoError(t, err)
	var got []string
	for _, s := range srcs {
		got = append(got, s.Object.GetName()+"@"+s.Position())
	}
	require.Equal(t, []string{"a@f.yaml:3", "b@f.yaml:9 (items[0])", "c@f.yaml:9 (items[1])"}, got)
}

func TestDecodeSourcesErrors(t *testing.T) {
	_, err := DecodeSources("f.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n"))
	require.ErrorContains(t, err, "f.yaml:")
	require.Regexp(t, `^f\.yaml:8: .*yaml: line 8:`, err.Error(), "the line in the file, not in the document")

	_, err = DecodeSources("f.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n\nmetadata: {name: b}\n"))
	require.EqualError(t, err, "f.yaml:6: object without apiVersion or kind")

	srcs, err := DecodeSources("j.json", []byte(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}`))
	require.NoError(t, err)
	require.Len(t, srcs, 1)
	require.Equal(t, "j.json:1", srcs[0].Position())
}

func TestSyntheticUID(t *testing.T) {
	a := SyntheticUID("apps/v1", "Deployment", "default", "web")
	require.Equal(t, a, SyntheticUID("apps/v1", "Deployment", "default", "web"), "stable")
	require.NotEqual(t, a, SyntheticUID("apps/v1", "Deployment", "other", "web"))
	require.NotEqual(t, a, SyntheticUID("apps/v1", "StatefulSet", "default", "web"))
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`), string(a))
}

func obj(apiVersion, kind, ns, name string, refs ...map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns}}}
	if len(refs) > 0 {
		var l []any
		for _, r := range refs {
			l = append(l, r)
		}
		o.Object["metadata"].(map[string]any)["ownerReferences"] = l
	}
	return o
}

func ref(apiVersion, kind, name, uid string) map[string]any {
	r := map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name, "controller": true}
	if uid != "" {
		r["uid"] = uid
	}
	return r
}

func TestResolveOwners(t *testing.T) {
	dep := obj("apps/v1", "Deployment", "ns", "web")
	rs := obj("apps/v1", "ReplicaSet", "ns", "web-1", ref("apps/v1", "Deployment", "web", ""))
	other := obj("apps/v1", "ReplicaSet", "other", "web-1", ref("apps/v1", "Deployment", "web", "")) // owner in another namespace: not resolved
	pinned := obj("v1", "Pod", "ns", "p", ref("apps/v1", "ReplicaSet", "web-2", "u-2"))
	named := obj("apps/v1", "ReplicaSet", "ns", "web-2") // takes the UID its child's reference carries
	kept := obj("v1", "Pod", "ns", "q")
	kept.SetUID("own")

	unresolved := ResolveOwners([]*unstructured.Unstructured{dep, rs, other, pinned, named, kept})
	require.Equal(t, SyntheticUID("apps/v1", "Deployment", "ns", "web"), dep.GetUID())
	require.Equal(t, dep.GetUID(), rs.GetOwnerReferences()[0].UID)
	require.Equal(t, types.UID("u-2"), named.GetUID())
	require.Equal(t, types.UID("u-2"), pinned.GetOwnerReferences()[0].UID)
	require.Equal(t, types.UID("own"), kept.GetUID())
	require.Len(t, unresolved, 1)
	require.Same(t, other, unresolved[0].Object)
	require.Empty(t, other.GetOwnerReferences()[0].UID)
}

// Unbounded input is refused with a clear error, before it is read whole.
func TestInputLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: \""+strings.Repeat("x", 2048)+"\"}\n"), 0o644))
	_, err := LoadSourcesLimited(Limits{MaxFileBytes: 1024}, big)
	require.ErrorIs(t, err, ErrLimit)
	require.ErrorContains(t, err, "per file")

	_, err = LoadSourcesLimited(Limits{MaxTotalBytes: 3000}, big, big)
	require.ErrorIs(t, err, ErrLimit)
	require.ErrorContains(t, err, "in all")

	// A device is not a manifest: os.ReadFile on it would never end.
	_, err = LoadSourcesLimited(Limits{}, "/dev/zero")
	require.ErrorIs(t, err, ErrLimit)
	require.ErrorContains(t, err, "not a regular file")

	// An alias bomb: a few KiB that would expand to gigabytes.
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a: &a \"" + strings.Repeat("x", 1000) + "\"\n")
	prev := "a"
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("l%d", i)
		b.WriteString("  " + name + ": &" + name + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = name
	}
	bomb := filepath.Join(dir, "bomb.yaml")
	require.NoError(t, os.WriteFile(bomb, []byte(b.String()), 0o644))
	_, err = LoadSourcesLimited(Limits{}, bomb)
	require.ErrorIs(t, err, ErrLimit)
	require.ErrorContains(t, err, "aliases")

	// Ordinary anchors and aliases are fine.
	ok := filepath.Join(dir, "ok.yaml")
	require.NoError(t, os.WriteFile(ok, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, labels: &l {a: b}, annotations: *l}\ndata: {x: y}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok2}\n"), 0o644))
	srcs, err := LoadSourcesLimited(Limits{}, ok)
	require.NoError(t, err)
	require.Len(t, srcs, 2)
}
