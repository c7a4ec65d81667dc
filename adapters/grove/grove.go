// Package grove is the adapter for Grove (ai-dynamo/grove), the gang
// scheduling layer the Dynamo operator renders graphs into. It declares the
// grove.io/v1alpha1 kinds that sit on the controller chain between a
// DynamoGraphDeployment (or any other owner of a PodCliqueSet) and its pods,
// all walk-only:
//
//	PodCliqueSet ──ctrl──> PodClique ──ctrl──> Pod
//	PodCliqueSet ──ctrl──> PodCliqueScalingGroup ──ctrl──> PodClique ──ctrl──> Pod
//
// They are never reported: the tracked owner (a DynamoGraphDeployment)
// absorbs them, and its adapter reads the images from its own spec. Scrape
// is therefore never called by the core; it returns an error.
//
// Two Grove kinds are deliberately not declared, because they are not
// ownership edges to pods: scheduler.grove.io PodGang references pods by
// name (spec.podgroups[].podReferences) without owning them, and
// ClusterTopologyBinding is a cluster-scoped topology description that owns
// nothing. The PodCliqueSet controls the PodGangs, but walking them would
// lead nowhere.
package grove

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aibom-dev/aibom/pkg/adapter"
)

// Name is the adapter's name, as used by the --adapters flag.
const Name = "grove"

// Group is Grove's API group.
const Group = "grove.io"

// ErrWalkOnly is returned by Scrape: Grove kinds are walk-only.
var ErrWalkOnly = errors.New("grove: grove kinds are walk-only and are never scraped")

var kinds = []adapter.Kind{
	{Group: Group, Kind: "PodCliqueSet", Resource: "podcliquesets", Versions: []string{"v1alpha1"}, Role: adapter.RoleWalkOnly},
	{Group: Group, Kind: "PodCliqueScalingGroup", Resource: "podcliquescalinggroups", Versions: []string{"v1alpha1"}, Role: adapter.RoleWalkOnly},
	{Group: Group, Kind: "PodClique", Resource: "podcliques", Versions: []string{"v1alpha1"}, Role: adapter.RoleWalkOnly},
}

type groveAdapter struct{}

// New returns the Grove adapter.
func New() adapter.Adapter { return groveAdapter{} }

func (groveAdapter) Name() string { return Name }

func (groveAdapter) Kinds() []adapter.Kind { return adapter.CloneKinds(kinds) }

// Scrape always fails with ErrWalkOnly: the core never scrapes walk-only
// kinds.
func (groveAdapter) Scrape(context.Context, *unstructured.Unstructured) (adapter.Findings, error) {
	return adapter.Findings{}, ErrWalkOnly
}
