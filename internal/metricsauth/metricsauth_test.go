package metricsauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/aibom-dev/aibom/internal/controlplane"
	"github.com/aibom-dev/aibom/internal/metricsauth"
)

var cfg *rest.Config

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	env, err := controlplane.New()
	if err != nil {
		panic(err)
	}
	if cfg, err = env.Start(); err != nil {
		panic(err)
	}
	defer func() { _ = env.Stop() }()
	return m.Run()
}

// token creates a service account and returns a token the API server
// issued for it; with allowed, the account may get /metrics.
func token(t *testing.T, cs kubernetes.Interface, name string, allowed bool) string {
	t.Helper()
	ctx := context.Background()
	const ns = "default"
	_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	if allowed {
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}

// TestScrapesNeedAnAcceptedTokenAndTheRightToGetTheURL runs the filter
// against a real API server: its TokenReviews and SubjectAccessReviews
// decide, under the API server's RBAC.
func TestScrapesNeedAnAcceptedTokenAndTheRightToGetTheURL(t *testing.T) {
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	// Count the reviews the filter asks for.
	var mu sync.Mutex
	reviews := map[string]int{}
	counted := rest.CopyConfig(cfg)
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			reviews[path.Base(req.URL.Path)]++
			mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	httpClient, err := rest.HTTPClientFor(counted)
	require.NoError(t, err)
	filter, err := metricsauth.FilterProvider(cfg, httpClient)
	require.NoError(t, err)
	h, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	scraper := token(t, cs, "scraper", true)
	stranger := token(t, cs, "stranger", false)
	get := func(method, path, auth string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name         string
		method, path string
		auth         string
		want         int
	}{
		{"no token", http.MethodGet, "/metrics", "", http.StatusUnauthorized},
		{"not a bearer token", http.MethodGet, "/metrics", "Basic " + scraper, http.StatusUnauthorized},
		{"a token the API server did not issue", http.MethodGet, "/metrics", "Bearer not-a-token", http.StatusUnauthorized},
		{"a user without the grant", http.MethodGet, "/metrics", "Bearer " + stranger, http.StatusForbidden},
		{"the scraper", http.MethodGet, "/metrics", "Bearer " + scraper, http.StatusOK},
		{"the scraper again (remembered)", http.MethodGet, "/metrics", "bearer " + scraper, http.StatusOK},
		{"the scraper, another verb", http.MethodPost, "/metrics", "Bearer " + scraper, http.StatusForbidden},
		{"the scraper, another URL", http.MethodGet, "/debug/pprof/", "Bearer " + scraper, http.StatusForbidden},
		{"the stranger again (remembered)", http.MethodGet, "/metrics", "Bearer " + stranger, http.StatusForbidden},
	} {
		require.Equal(t, tc.want, get(tc.method, tc.path, tc.auth), tc.name)
	}
	// One TokenReview per distinct token (none for a header that carries
	// none), one SubjectAccessReview per distinct (user, verb, path): the
	// repeated requests were answered from memory.
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]int{"tokenreviews": 3, "subjectaccessreviews": 4}, reviews)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
