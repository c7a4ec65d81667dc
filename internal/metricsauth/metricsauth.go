// Package metricsauth guards the controller's metrics endpoint: a scrape must
// carry a bearer token the API server accepts (a TokenReview), for a user the
// API server allows the request on the endpoint's URL (a SubjectAccessReview
// of the non-resource URL, the request's method in lower case as the verb).
//
// It makes the decisions controller-runtime's metrics/filters makes, over
// client-go's typed clients alone. That package links k8s.io/apiserver's
// authentication stack (its CEL environments, OpenTelemetry exporters,
// webhook clients and audit types) for two API calls: half of the
// controller's binary and about 17 MiB of resident memory from the moment it
// starts, whether metrics are served securely or not (docs/performance.md,
// "The binary").
package metricsauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The caches' bounds and lifetimes. A token is asked about at most once a
// minute and a decision once per allowTTL (denyTTL when denied), so that a
// scraper every few seconds costs the API server almost nothing; each cache
// holds at most cacheSize entries, so that a client sending a new token on
// every request cannot grow the controller's memory.
const (
	tokenTTL       = time.Minute
	failedTokenTTL = 10 * time.Second
	allowTTL       = 5 * time.Minute
	denyTTL        = 30 * time.Second
	reviewTimeout  = 10 * time.Second
	cacheSize      = 1024
)

// Reviewer asks the API server who a token belongs to and what that user
// may do, remembering the answers for a short while.
type Reviewer struct {
	// inflight joins concurrent first requests with one token (or one
	// decision) into one review.
	inflight singleflight.Group
	tokens   authnclient.TokenReviewInterface
	access   authzclient.SubjectAccessReviewInterface
	users    *cache.LRUExpireCache // token digest -> *authenticationv1.UserInfo (nil: rejected)
	grants   *cache.LRUExpireCache // attributes -> bool
}

// NewReviewer builds a Reviewer over the API server the config names.
func NewReviewer(c *rest.Config, httpClient *http.Client) (*Reviewer, error) {
	authn, err := authnclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authzclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	return &Reviewer{
		tokens: authn.TokenReviews(),
		access: authz.SubjectAccessReviews(),
		users:  cache.NewLRUExpireCache(cacheSize),
		grants: cache.NewLRUExpireCache(cacheSize),
	}, nil
}

// FilterProvider is a metricsserver.Options.FilterProvider.
func FilterProvider(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	r, err := NewReviewer(c, httpClient)
	if err != nil {
		return nil, err
	}
	return r.Filter, nil
}

// Filter wraps the metrics handler: 401 without a token the API server
// accepts, 403 when the user may not use the method on the URL, 500 when the
// API server could not be asked. The responses name neither the token nor
// the user.
func (r *Reviewer) Filter(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
		defer cancel()
		token, ok := bearerToken(req)
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		user, err := r.authenticate(ctx, token)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// The client went away or the API server did not answer in
			// time: not worth an error line per request.
			log.V(1).Info("metrics request: token review not completed", "error", err.Error())
			http.Error(w, "Authentication failed", http.StatusInternalServerError)
			return
		}
		if err != nil {
			log.Error(err, "metrics request: token review failed")
			http.Error(w, "Authentication failed", http.StatusInternalServerError)
			return
		}
		if user == nil {
			log.V(4).Info("metrics request: token rejected")
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		verb := strings.ToLower(req.Method)
		allowed, err := r.authorize(ctx, user, verb, req.URL.Path)
		if err != nil {
			log.Error(err, "metrics request: access review failed", "user", user.Username)
			http.Error(w, "Authorization failed", http.StatusInternalServerError)
			return
		}
		if !allowed {
			log.V(4).Info("metrics request: denied", "user", user.Username, "verb", verb, "path", req.URL.Path)
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		// The token stays here: nothing behind the guard needs it.
		req.Header.Del("Authorization")
		next.ServeHTTP(w, req)
	}), nil
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// authenticate returns the token's user, nil when the API server rejects the
// token. Tokens are remembered by their digest, never as they are.
func (r *Reviewer) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	key := sha256.Sum256([]byte(token))
	if v, ok := r.users.Get(key); ok {
		return v.(*authenticationv1.UserInfo), nil
	}
	v, err, _ := r.inflight.Do("t"+string(key[:]), func() (any, error) {
		review, err := r.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("token review: %w", err)
		}
		if !review.Status.Authenticated {
			if review.Status.Error == "" {
				// A rejection, remembered; an authenticator's failure
				// inside the API server is asked about again next time.
				r.users.Add(key, (*authenticationv1.UserInfo)(nil), failedTokenTTL)
			}
			return (*authenticationv1.UserInfo)(nil), nil
		}
		user := review.Status.User
		r.users.Add(key, &user, tokenTTL)
		return &user, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*authenticationv1.UserInfo), nil
}

// authorize asks whether the user may use verb on the non-resource URL path.
func (r *Reviewer) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, error) {
	key := grantKey(user, verb, path)
	if key == "" {
		return false, fmt.Errorf("access review key of user %q", user.Username)
	}
	if v, ok := r.grants.Get(key); ok {
		return v.(bool), nil
	}
	v, err, _ := r.inflight.Do("g"+key, func() (any, error) {
		extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
		review, err := r.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
		}}, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("subject access review: %w", err)
		}
		allowed := review.Status.Allowed && !review.Status.Denied
		ttl := denyTTL
		if allowed {
			ttl = allowTTL
		}
		r.grants.Add(key, allowed, ttl)
		return allowed, nil
	})
	if err != nil {
		return false, err
	}
	return v.(bool), nil
}

// grantKey identifies a decision: the whole user (name, UID, groups and
// extra values) and the request's verb and path. The JSON encoding of the
// review's attributes is unambiguous (every string quoted and escaped,
// every list delimited), so no two different inputs share a key; groups and
// extra keys are sorted first, since their order decides nothing.
func grantKey(user *authenticationv1.UserInfo, verb, path string) string {
	groups := append([]string(nil), user.Groups...)
	sort.Strings(groups)
	b, err := json.Marshal(struct {
		User, UID, Verb, Path string
		Groups                []string
		Extra                 map[string]authenticationv1.ExtraValue // encoding/json sorts map keys
	}{user.Username, user.UID, verb, path, groups, user.Extra})
	if err != nil {
		// Not reachable for strings; never share a key if it were.
		return ""
	}
	sum := sha256.Sum256(b)
	return string(sum[:])
}
