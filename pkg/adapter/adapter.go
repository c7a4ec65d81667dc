package adapter

import (
	"context"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ContractVersion is the version of this contract. Out-of-tree adapters
// negotiate it when they connect.
const ContractVersion = 1

// Adapter is what an operator integration implements.
type Adapter interface {
	// Name is the adapter's short name, as used by the --adapters flag
	// (for example "apps", "dynamo").
	Name() string
	// Kinds lists every kind the adapter knows, tracked or walk-only.
	Kinds() []Kind
	// Scrape reads one object of a tracked kind, given as unstructured JSON in
	// one of the versions the adapter declared for that kind, and returns what
	// it found. Scrape must not panic on malformed input: a field of the wrong
	// type is an error (or a finding the adapter skips), never a crash. Scrape
	// must be deterministic: the same object gives the same findings. The
	// object is the workload as the controller caches it: metadata (without
	// managedFields and the kubectl last-applied-configuration annotation)
	// and spec; status is not kept, so a scraper must not depend on it.
	Scrape(ctx context.Context, obj *unstructured.Unstructured) (Findings, error)
}

// Role says what the core does with objects of a kind.
type Role string

const (
	// RoleTracked marks a workload kind: reported as a root unless a tracked
	// kind controls it.
	RoleTracked Role = "tracked"
	// RoleWalkOnly marks an intermediate kind: read for the ownership walk and
	// the closure only.
	RoleWalkOnly Role = "walk-only"
)

// Kind declares one Kubernetes kind an adapter knows.
type Kind struct {
	// Group is the API group; empty for the core group (Pod).
	Group string
	// Kind is the kind, e.g. "DynamoGraphDeployment".
	Kind string
	// Resource is the plural resource name, e.g. "dynamographdeployments".
	Resource string
	// Versions lists the versions the adapter understands, preferred first.
	// The core uses the most preferred version the cluster serves.
	Versions []string
	// Role is RoleTracked or RoleWalkOnly.
	Role Role
	// PodOwners declares, for a tracked kind, how it materialises pods: the
	// kinds that are the controller of its pods when no other tracked kind
	// lies between the workload and the pod. A Deployment's pods are
	// controlled by a ReplicaSet ({apps ReplicaSet}); a StatefulSet's by the
	// StatefulSet itself ({apps StatefulSet}); a CronJob's pods belong to
	// its Jobs, which are tracked in their own right ({batch Job}).
	//
	// The core reads running image digests only from pods that fit: a pod
	// below a workload of this kind whose controller is of another kind (a
	// pod whose controller reference names a Deployment directly, say) is
	// not attributed to the workload's document; it is counted and reported
	// in a Warning Event instead. Empty means the kind does not say: any pod
	// the ownership closure reaches counts. Walk-only kinds declare nothing.
	PodOwners []schema.GroupKind
}

// GroupKind returns the kind's group and kind.
func (k Kind) GroupKind() schema.GroupKind { return schema.GroupKind{Group: k.Group, Kind: k.Kind} }

// GroupVersionKind returns the kind in its most preferred version.
func (k Kind) GroupVersionKind() schema.GroupVersionKind {
	v := ""
	if len(k.Versions) > 0 {
		v = k.Versions[0]
	}
	return k.GroupKind().WithVersion(v)
}

// GroupVersionResource returns the resource in its most preferred version.
func (k Kind) GroupVersionResource() schema.GroupVersionResource {
	return k.GroupVersionKind().GroupVersion().WithResource(k.Resource)
}

func (k Kind) String() string {
	if k.Group == "" {
		return k.Kind
	}
	return k.Kind + "." + k.Group
}

var (
	dnsLabel   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	kindName   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	versionStr = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
)

// Validate reports the first thing wrong with a kind declaration.
func (k Kind) Validate() error {
	if k.Group != "" {
		for _, part := range splitDots(k.Group) {
			if !dnsLabel.MatchString(part) {
				return fmt.Errorf("kind %s: group %q is not a DNS subdomain", k, k.Group)
			}
		}
	}
	if !kindName.MatchString(k.Kind) {
		return fmt.Errorf("kind %s: kind %q must be CamelCase letters and digits", k, k.Kind)
	}
	if !dnsLabel.MatchString(k.Resource) {
		return fmt.Errorf("kind %s: resource %q must be a lower-case plural", k, k.Resource)
	}
	if len(k.Versions) == 0 {
		return fmt.Errorf("kind %s: no versions declared", k)
	}
	seen := map[string]bool{}
	for _, v := range k.Versions {
		if !versionStr.MatchString(v) {
			return fmt.Errorf("kind %s: version %q is not a Kubernetes API version", k, v)
		}
		if seen[v] {
			return fmt.Errorf("kind %s: version %q declared twice", k, v)
		}
		seen[v] = true
	}
	if k.Role != RoleTracked && k.Role != RoleWalkOnly {
		return fmt.Errorf("kind %s: role %q is neither %q nor %q", k, k.Role, RoleTracked, RoleWalkOnly)
	}
	return k.validatePodOwners()
}

// validatePodOwners checks the PodOwners declaration: tracked kinds only,
// well-formed group and kind names, no repeats, and never Pod itself (a pod
// is not the controller of the pods that count).
func (k Kind) validatePodOwners() error {
	if len(k.PodOwners) > 0 && k.Role != RoleTracked {
		return fmt.Errorf("kind %s: PodOwners declared on a %s kind; only a tracked kind declares how it materialises pods", k, k.Role)
	}
	seen := map[schema.GroupKind]bool{}
	for _, o := range k.PodOwners {
		if o.Group != "" {
			for _, part := range splitDots(o.Group) {
				if !dnsLabel.MatchString(part) {
					return fmt.Errorf("kind %s: pod owner %s: group %q is not a DNS subdomain", k, o, o.Group)
				}
			}
		}
		if !kindName.MatchString(o.Kind) {
			return fmt.Errorf("kind %s: pod owner %s: kind %q must be CamelCase letters and digits", k, o, o.Kind)
		}
		if o.Group == "" && o.Kind == "Pod" {
			return fmt.Errorf("kind %s: Pod cannot be a pod owner: name the kind that controls the pods", k)
		}
		if seen[o] {
			return fmt.Errorf("kind %s: pod owner %s declared twice", k, o)
		}
		seen[o] = true
	}
	return nil
}

// AcceptsPodOwner reports whether a pod controlled by an object of kind
// owner fits the kind's declared materialisation path: always when the kind
// declares no PodOwners.
func (k Kind) AcceptsPodOwner(owner schema.GroupKind) bool {
	if len(k.PodOwners) == 0 {
		return true
	}
	for _, o := range k.PodOwners {
		if o == owner {
			return true
		}
	}
	return false
}

func splitDots(s string) []string {
	var parts []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return parts
}

// CloneKinds returns a deep copy of a kind table. An adapter's Kinds returns
// one, so that a caller changing what it got cannot change the adapter.
func CloneKinds(kinds []Kind) []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		k.Versions = append([]string(nil), k.Versions...)
		if k.PodOwners != nil {
			k.PodOwners = append([]schema.GroupKind(nil), k.PodOwners...)
		}
		out[i] = k
	}
	return out
}

// Tracks reports whether a kind table declares gvk as a tracked kind in that
// version: what a scraper checks before reading an object.
func Tracks(kinds []Kind, gvk schema.GroupVersionKind) bool {
	for _, k := range kinds {
		if k.Role == RoleTracked && k.Group == gvk.Group && k.Kind == gvk.Kind {
			for _, v := range k.Versions {
				if v == gvk.Version {
					return true
				}
			}
		}
	}
	return false
}
