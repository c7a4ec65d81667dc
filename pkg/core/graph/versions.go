package graph

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// ServedVersions negotiates versions: for each kind, the adapter's most
// preferred version that the cluster serves. It remembers discovery answers,
// so one pass over every kind asks once per group-version. The supervisor and
// the command line's cluster snapshot share this one rule.
type ServedVersions struct {
	Discovery discovery.DiscoveryInterface
	served    map[string]map[string]string // group/version -> kind -> resource
}

// Preferred returns the most preferred served version of a kind; ok is false
// when the cluster serves none of the adapter's versions. An error means
// discovery itself failed (not "not served").
func (s *ServedVersions) Preferred(e Entry) (version string, ok bool, err error) {
	if s.served == nil {
		s.served = map[string]map[string]string{}
	}
	for _, v := range e.Versions {
		gv := schema.GroupVersion{Group: e.Group, Version: v}.String()
		kinds, known := s.served[gv]
		if !known {
			list, derr := s.Discovery.ServerResourcesForGroupVersion(gv)
			if derr != nil && !apierrors.IsNotFound(derr) {
				return "", false, fmt.Errorf("discovery of %s: %w", gv, derr)
			}
			kinds = map[string]string{}
			if list != nil {
				for _, r := range list.APIResources {
					if !strings.Contains(r.Name, "/") { // not a subresource
						kinds[r.Kind] = r.Name
					}
				}
			}
			s.served[gv] = kinds
		}
		if kinds[e.Kind.Kind] == e.Resource {
			return v, true, nil
		}
	}
	return "", false, nil
}
