package readiness

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// cluster is a fake API server: it serves the AIBOM API or not, and denies
// the listed verb/resource pairs.
type cluster struct {
	clientset *fake.Clientset
	reviews   int
	deny      map[string]bool
}

func newCluster(servesAIBOMs bool) *cluster {
	c := &cluster{clientset: fake.NewClientset(), deny: map[string]bool{}}
	if servesAIBOMs {
		c.clientset.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
			GroupVersion: "aibom.dev/v1alpha1",
			APIResources: []metav1.APIResource{{Name: "aiboms", Kind: "AIBOM", Namespaced: true}, {Name: "aiboms/status"}},
		}}
	}
	c.clientset.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		c.reviews++
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		r.Status.Allowed = !c.deny[describe(*r.Spec.ResourceAttributes)]
		return true, r, nil
	})
	return c
}

func (c *cluster) checker(now *time.Time) *Checker {
	return &Checker{
		Discovery:    c.clientset.Discovery(),
		Reviews:      c.clientset.AuthorizationV1().SelfSubjectAccessReviews(),
		GroupVersion: "aibom.dev/v1alpha1",
		Resource:     "aiboms",
		Interval:     30 * time.Second,
		now:          func() time.Time { return *now },
	}
}

func check(c *Checker) error { return c.Check(httptest.NewRequest("GET", "/readyz", nil)) }

func TestReadyWhenServedAndPermitted(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCluster(true)
	require.NoError(t, check(c.checker(&now)))
	require.Equal(t, len(Required), c.reviews, "one review per required permission")
}

func TestNotReadyWithoutTheCRD(t *testing.T) {
	now := time.Unix(0, 0)
	err := check(newCluster(false).checker(&now))
	require.ErrorContains(t, err, "is the CRD installed?")
}

func TestNotReadyWhenAPermissionIsLost(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCluster(true)
	checker := c.checker(&now)
	require.NoError(t, check(checker))

	c.deny["patch aiboms/status.aibom.dev"] = true
	c.deny["watch namespaces"] = true
	require.NoError(t, check(checker), "a result is reused within the interval")

	now = now.Add(31 * time.Second)
	err := check(checker)
	require.ErrorContains(t, err, "permissions missing: watch namespaces, patch aiboms/status.aibom.dev")

	delete(c.deny, "patch aiboms/status.aibom.dev")
	delete(c.deny, "watch namespaces")
	now = now.Add(31 * time.Second)
	require.NoError(t, check(checker), "ready again once the permission is back")
}
