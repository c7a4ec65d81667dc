// Package readiness decides whether the controller can do its job, for
// /readyz: the AIBOM API is served and the controller's identity still holds
// the permissions without which it cannot write a single document. A process
// that is merely up is not ready.
//
// Each check costs API requests (one discovery GET and one
// SelfSubjectAccessReview per permission), so a result is reused for an
// interval instead of being recomputed on every probe.
package readiness

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// Required are the permissions without which no AIBOM can be kept: read the
// opt-in label on namespaces, read and write AIBOMs and their status. A
// missing permission on a workload kind is not here: it degrades that kind
// only and is reported by aibom_watch_healthy.
var Required = []authorizationv1.ResourceAttributes{
	{Verb: "list", Resource: "namespaces"},
	{Verb: "watch", Resource: "namespaces"},
	{Verb: "list", Group: "aibom.dev", Resource: "aiboms"},
	{Verb: "watch", Group: "aibom.dev", Resource: "aiboms"},
	{Verb: "create", Group: "aibom.dev", Resource: "aiboms"},
	{Verb: "delete", Group: "aibom.dev", Resource: "aiboms"},
	{Verb: "patch", Group: "aibom.dev", Resource: "aiboms", Subresource: "status"},
}

// Checker answers whether the AIBOM API is served and Required is granted.
type Checker struct {
	// Discovery finds the AIBOM API (GroupVersion, Resource).
	Discovery discovery.DiscoveryInterface
	// Reviews asks the API server about the controller's own permissions.
	Reviews authorizationclient.SelfSubjectAccessReviewInterface
	// GroupVersion and Resource name the AIBOM API, e.g. aibom.dev/v1alpha1
	// and aiboms.
	GroupVersion, Resource string
	// Interval is how long a result is reused.
	Interval time.Duration
	// Log receives one line each time the verdict changes (the probe's
	// HTTP answer withholds the reason).
	Log logr.Logger

	now     func() time.Time
	mu      sync.Mutex
	checked time.Time
	last    error
}

// Check is a healthz.Checker: nil when ready, otherwise the reason.
func (c *Checker) Check(req *http.Request) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	if !c.checked.IsZero() && now().Sub(c.checked) < c.Interval {
		return c.last
	}
	ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
	defer cancel()
	err := c.check(ctx)
	switch {
	case err != nil && (c.last == nil || c.last.Error() != err.Error()):
		c.Log.Info("not ready", "reason", err.Error())
	case err == nil && c.last != nil:
		c.Log.Info("ready again")
	}
	c.last, c.checked = err, now()
	return err
}

func (c *Checker) check(ctx context.Context) error {
	resources, err := c.Discovery.ServerResourcesForGroupVersion(c.GroupVersion)
	if err != nil {
		return fmt.Errorf("the AIBOM API %s is not served (is the CRD installed?): %w", c.GroupVersion, err)
	}
	served := false
	for _, r := range resources.APIResources {
		served = served || r.Name == c.Resource
	}
	if !served {
		return fmt.Errorf("the AIBOM API %s serves no %s (is the CRD installed?)", c.GroupVersion, c.Resource)
	}
	var denied []string
	for _, attrs := range Required {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs.DeepCopy()}}
		got, err := c.Reviews.Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("SelfSubjectAccessReview %s: %w", describe(attrs), err)
		}
		if !got.Status.Allowed {
			denied = append(denied, describe(attrs))
		}
	}
	if len(denied) > 0 {
		return fmt.Errorf("permissions missing: %s", strings.Join(denied, ", "))
	}
	return nil
}

func describe(a authorizationv1.ResourceAttributes) string {
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	if a.Group != "" {
		r += "." + a.Group
	}
	return a.Verb + " " + r
}
