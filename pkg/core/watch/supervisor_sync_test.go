package watch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A kind's first sync is seen within a poll or two of it, and a wait ends
// with its context.
func TestWaitSyncedFollowsTheInformer(t *testing.T) {
	var synced atomic.Bool
	go func() {
		time.Sleep(30 * time.Millisecond)
		synced.Store(true)
	}()
	done := make(chan bool, 1)
	go func() { done <- waitSynced(context.Background(), synced.Load) }()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("waitSynced returned false for a cache that synced")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waitSynced did not see the sync")
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	if waitSynced(ctx, func() bool { return false }) {
		t.Fatal("waitSynced returned true for a cache that never synced")
	}
}

// Startup is settled once every kind synced and the replay that follows its
// sync returned (or the kind failed): the workers start with every object
// of a synced kind in the queue.
func TestStartupWaitsForEachKindsSyncReplay(t *testing.T) {
	s := &Supervisor{}
	s.init()
	s.passed.Store(true)
	kw := &kindWatch{}
	kw.syncReplayPending.Store(true)
	s.kinds[schema.GroupKind{Kind: "Pod"}] = kw
	if s.startupSettled() {
		t.Fatal("settled before the kind synced")
	}
	kw.synced.Store(true)
	if s.startupSettled() {
		t.Fatal("settled while the kind's sync replay runs")
	}
	kw.syncReplayPending.Store(false)
	if !s.startupSettled() {
		t.Fatal("not settled once the kind synced and was replayed")
	}
	failed := &kindWatch{outage: true}
	failed.syncReplayPending.Store(true)
	s.kinds[schema.GroupKind{Kind: "Job", Group: "batch"}] = failed
	if !s.startupSettled() {
		t.Fatal("a kind that failed holds the others")
	}
}
