package core

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/aibom-dev/aibom/pkg/core/watch"
)

// The supervisor joins the manager's first group, the caches: controller-
// runtime puts there a runnable that has a cache (its own interface for it
// is unexported; this is its shape). The group waits for each member's
// cache, which must not hold the others back, and the supervisor keeps
// running on every replica.
func TestSupervisorStartsWithTheManagersCaches(t *testing.T) {
	var r manager.Runnable = startWithCaches{&watch.Supervisor{}}
	member, ok := r.(interface {
		manager.Runnable
		GetCache() cache.Cache
	})
	if !ok {
		t.Fatal("the supervisor's runnable has no cache: the manager would start it after its caches synced")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a cache that waited for anything would see this and fail
	if !member.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the group's wait for the supervisor's cache must answer at once")
	}
	if r.(manager.LeaderElectionRunnable).NeedLeaderElection() {
		t.Fatal("the supervisor runs on every replica")
	}
}
