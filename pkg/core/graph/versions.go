package graph

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// ServedVersions negotiates versions: for each kind, the adapter's most
// preferred version that the cluster serves. It remembers discovery answers:
// a pass over every kind first asks for the whole of discovery at once (two
// requests where the API server serves aggregated discovery, the default
// since Kubernetes 1.30), then only for the group-versions that answer
// failed. The supervisor and the command line's cluster snapshot share this
// one rule.
type ServedVersions struct {
	Discovery discovery.DiscoveryInterface
	served    map[string]map[string]string // group/version -> kind -> resource
	// whole is set once the whole of discovery answered: a group-version
	// it does not list is not served, unless it is in failed.
	whole  bool
	failed map[schema.GroupVersion]error
}

// Preferred returns the most preferred served version of a kind; ok is false
// when the cluster serves none of the adapter's versions. An error means
// discovery itself failed (not "not served").
func (s *ServedVersions) Preferred(e Entry) (version string, ok bool, err error) {
	if s.served == nil {
		s.served = map[string]map[string]string{}
		s.prefetch()
	}
	for _, v := range e.Versions {
		gv := schema.GroupVersion{Group: e.Group, Version: v}.String()
		kinds, known := s.served[gv]
		if !known {
			_, failed := s.failed[schema.GroupVersion{Group: e.Group, Version: v}]
			if s.whole && !failed {
				kinds = map[string]string{} // not served
			} else {
				list, derr := s.Discovery.ServerResourcesForGroupVersion(gv)
				if derr != nil && !apierrors.IsNotFound(derr) {
					return "", false, fmt.Errorf("discovery of %s: %w", gv, derr)
				}
				kinds = servedKinds(list)
			}
			s.served[gv] = kinds
		}
		if kinds[e.Kind.Kind] == e.Resource {
			return v, true, nil
		}
	}
	return "", false, nil
}

// Absent reports whether discovery shows that no object of the kind can
// exist: the whole of discovery answered, no group-version of the kind's
// group failed, and no served version of the group lists the kind (under
// any resource). A kind served only in versions or under a resource the
// adapter does not name is not absent: its objects exist, unread.
func (s *ServedVersions) Absent(e Entry) bool {
	if !s.whole {
		return false
	}
	for gv := range s.failed {
		if gv.Group == e.Group {
			return false
		}
	}
	for name, kinds := range s.served {
		gv, err := schema.ParseGroupVersion(name)
		if err != nil || gv.Group != e.Group {
			continue
		}
		if _, listed := kinds[e.Kind.Kind]; listed {
			return false
		}
	}
	return true
}

// prefetch asks for every group-version's resources at once. A partial
// answer (some groups failed, an aggregated API server down) keeps what
// answered and marks the rest failed, to be asked one by one; a failure of
// the whole leaves every group-version to be asked one by one, as before.
func (s *ServedVersions) prefetch() {
	_, lists, err := s.Discovery.ServerGroupsAndResources()
	var partial *discovery.ErrGroupDiscoveryFailed
	switch {
	case err == nil:
	case errors.As(err, &partial):
		s.failed = partial.Groups
	default:
		return
	}
	for _, list := range lists {
		if list == nil {
			continue
		}
		s.served[list.GroupVersion] = servedKinds(list)
	}
	s.whole = true
}

// servedKinds maps the kinds of a resource list to their resources (not
// subresources).
func servedKinds(list *metav1.APIResourceList) map[string]string {
	kinds := map[string]string{}
	if list == nil {
		return kinds
	}
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") {
			kinds[r.Kind] = r.Name
		}
	}
	return kinds
}
