package watch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
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
