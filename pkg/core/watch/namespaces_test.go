package watch

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// A namespace that opts in is admitted and held pending in one step: when
// its OnChange runs (which fills the caches, then marks it ready), no event
// of it has been able to pass OptedIn yet. Without OnChange nothing would
// mark it ready, so nothing holds it.
func TestANamespaceThatOptsInIsPendingUntilMarkedReady(t *testing.T) {
	optedIn := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{graph.OptInLabel: "true"}}}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"team": "x"}}}

	set := NewNamespaceSet()
	var seen []string
	set.OnChange = func(ns string) {
		seen = append(seen, ns)
		if !set.Admitted(ns) {
			return // it left
		}
		require.False(t, set.OptedIn(ns), "%s: opted in before its caches are filled", ns)
		set.setPending(ns, false)
	}
	set.Handler().OnAdd(optedIn, false)
	set.Handler().OnAdd(other, false)
	require.Equal(t, []string{"a"}, seen)
	require.True(t, set.OptedIn("a"))
	require.False(t, set.OptedIn("b"))

	// A selector change that brings b in holds it the same way.
	sel, err := labels.Parse("team=x")
	require.NoError(t, err)
	set.SetSelector(sel)
	require.Equal(t, []string{"a", "a", "b"}, seen, "a left and b entered")
	require.False(t, set.OptedIn("a"))
	require.True(t, set.OptedIn("b"))

	bare := NewNamespaceSet()
	bare.Handler().OnAdd(optedIn, false)
	require.True(t, bare.OptedIn("a"), "without OnChange nothing holds a namespace")
}
