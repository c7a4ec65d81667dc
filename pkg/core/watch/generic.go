package watch

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aibom-dev/aibom/pkg/adapter"
	"github.com/aibom-dev/aibom/pkg/core/graph"
)

// Kinds no adapter declares, met as controller owners (generic roots), are
// read lazily: the walk notes each kind the first time a controller
// reference names it, and the next discovery pass resolves it. A namespaced
// kind the cluster serves and the controller may list and watch is
// registered (Registry.AddGenericKind) and watched like any other, its
// objects cached whole for the generic scraper; one it may not read stays
// unregistered, and its objects are generic roots as their children's
// references name them. A cluster-scoped kind (a Node owning mirror pods)
// is never an owner the walk passes: the chain ends below it.

// resolveUnknownOwners resolves the owner kinds noted since the last pass.
func (s *Supervisor) resolveUnknownOwners(ctx context.Context) {
	for _, gvk := range s.Registry.TakeUnknownOwners() {
		s.resolveUnknownOwner(ctx, gvk)
	}
}

func (s *Supervisor) resolveUnknownOwner(ctx context.Context, gvk schema.GroupVersionKind) {
	if s.discovery == nil {
		return
	}
	list, err := s.discovery.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if err != nil {
		if apierrors.IsNotFound(err) {
			s.Log.V(1).Info("controller owner kind not served; its objects are generic roots as their children's references name them", "kind", gvk.GroupKind().String())
			return
		}
		s.Log.V(1).Info("cannot resolve a controller owner kind; trying again when it is met next", "kind", gvk.GroupKind().String(), "error", err.Error())
		s.Registry.ForgetUnknownOwner(gvk.GroupKind())
		return
	}
	for _, r := range list.APIResources {
		if r.Kind != gvk.Kind || strings.Contains(r.Name, "/") {
			continue
		}
		if !r.Namespaced {
			s.Registry.MarkClusterScopedOwner(gvk.GroupKind())
			s.Log.V(1).Info("controller owner kind is cluster-scoped; the ownership walk ends below its objects", "kind", gvk.GroupKind().String())
			return
		}
		k := adapter.Kind{Group: gvk.Group, Kind: gvk.Kind, Resource: r.Name, Versions: []string{gvk.Version}, Role: adapter.RoleWalkOnly}
		e := graph.Entry{Kind: k, Version: gvk.Version}
		if !s.mayWatch(ctx, e) {
			genericUnreadable.WithLabelValues(gvk.GroupKind().String()).Set(1)
			s.Log.Info("the controller may not list and watch a controller owner kind no adapter declares; its objects are generic roots as their children's references name them (grant get, list and watch to read their specs: see docs/install.md)", "kind", gvk.GroupKind().String())
			return
		}
		if err := s.Registry.AddGenericKind(k); err != nil {
			s.Log.Error(err, "cannot register a controller owner kind", "kind", gvk.GroupKind().String())
			return
		}
		genericUnreadable.WithLabelValues(gvk.GroupKind().String()).Set(0)
		s.Log.Info("controller owner kind no adapter declares will be read as generic roots", "kind", gvk.GroupKind().String(), "resource", r.Name, "version", gvk.Version)
		return
	}
	s.Log.V(1).Info("controller owner kind not served in its version; its objects are generic roots as their children's references name them", "kind", gvk.GroupKind().String(), "version", gvk.Version)
}

// mayWatch reports whether the controller may list and watch a kind
// cluster-wide (SelfSubjectAccessReview). Without an authorization client it
// answers true: the watch's own errors then degrade as for any unreadable
// kind.
func (s *Supervisor) mayWatch(ctx context.Context, e graph.Entry) bool {
	if s.authz == nil {
		return true
	}
	for _, verb := range []string{"list", "watch"} {
		ok, err := s.allowed(ctx, e, verb)
		if err != nil || !ok {
			return false
		}
	}
	return true
}
