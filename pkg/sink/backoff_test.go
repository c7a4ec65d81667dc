package sink

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The wait after the n-th failed attempt: the initial backoff, doubling,
// capped; the same for every n past the cap.
func TestBackoffDoublesToTheCap(t *testing.T) {
	for _, tc := range []struct {
		initial, max time.Duration
		attempts     int
		want         time.Duration
	}{
		{time.Second, time.Minute, 0, time.Second},
		{time.Second, time.Minute, 1, time.Second},
		{time.Second, time.Minute, 2, 2 * time.Second},
		{time.Second, time.Minute, 6, 32 * time.Second},
		{time.Second, time.Minute, 7, time.Minute},
		{time.Second, time.Minute, 1000, time.Minute},
		{3 * time.Millisecond, 10 * time.Millisecond, 3, 10 * time.Millisecond},
		{time.Second, time.Second, 5, time.Second},
		{DefaultInitialBackoff, DefaultMaxBackoff, 1 << 30, DefaultMaxBackoff},
	} {
		require.Equal(t, tc.want, backoff(tc.initial, tc.max, tc.attempts), "%v..%v after %d", tc.initial, tc.max, tc.attempts)
	}
	// As the hand-written doubling it replaces computed it.
	for n := 0; n < 100; n++ {
		want := 7 * time.Millisecond
		for i := 1; i < n && want < 5*time.Second; i++ {
			want *= 2
		}
		require.Equal(t, min(want, 5*time.Second), backoff(7*time.Millisecond, 5*time.Second, n), n)
	}
}
