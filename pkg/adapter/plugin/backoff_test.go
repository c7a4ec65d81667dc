package plugin

import (
	"errors"
	"testing"
	"time"
)

func TestBackoffDoublesAndIsCapped(t *testing.T) {
	c := &Client{o: newOptions("test", []Option{Backoff(100*time.Millisecond, time.Second)})}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		before := time.Now()
		c.markDown(errors.New("down"))
		got := c.retryAt.Sub(before)
		w *= time.Millisecond
		if got < w || got > w+50*time.Millisecond {
			t.Errorf("failure %d: next start in %s, want %s", i+1, got, w)
		}
	}
}
