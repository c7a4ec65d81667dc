package watch

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aibom-dev/aibom/pkg/core/graph"
	"github.com/aibom-dev/aibom/pkg/core/internal/coretest"
)

// A kind registered since the last discovery pass (a profile just loaded)
// has no watch yet: it is undecided, so a read fails as "not synced" (the
// reconcile waits and its children do not report as roots), never as
// "not served". Once a pass has looked at it and found no watch to start,
// it reads as not served (the seed's degradation).
func TestARegisteredKindNoDiscoveryPassLookedAtIsUndecided(t *testing.T) {
	reg := coretest.TestRegistry(t)
	s := &Supervisor{Registry: reg}
	deploy := coretest.EntryOf(t, reg, coretest.DeployGVK)

	_, err := s.Get(context.Background(), deploy, "team-a", "llama")
	require.ErrorIs(t, err, graph.ErrKindNotSynced)
	_, err = s.InNamespace(context.Background(), deploy, "team-a")
	require.ErrorIs(t, err, graph.ErrKindNotSynced)

	s.decided.Store(deploy.GroupKind(), true)
	_, err = s.Get(context.Background(), deploy, "team-a", "llama")
	require.ErrorIs(t, err, graph.ErrKindNotReady)
	require.False(t, errors.Is(err, graph.ErrKindNotSynced), "looked at and not watched: not served")
}
