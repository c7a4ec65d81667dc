package scale

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseProcessCPU(t *testing.T) {
	pid, name, secs, err := parseProcessCPU("4242 (kube-apiserver) S 1 4242 4242 0 -1 4194560 1 0 0 0 250 75 0 0 20 0 12 0 100 1000 200 18446744073709551615")
	require.NoError(t, err)
	require.Equal(t, 4242, pid)
	require.Equal(t, "kube-apiserver", name)
	require.InDelta(t, 3.25, secs, 1e-9)

	// A name with spaces and a ")" is read up to the last ")".
	_, name, secs, err = parseProcessCPU("7 (a) b) R 1 7 7 0 -1 0 0 0 0 0 10 10 0 0 20 0 1 0 1 1 1 1")
	require.NoError(t, err)
	require.Equal(t, "a) b", name)
	require.InDelta(t, 0.2, secs, 1e-9)

	_, _, _, err = parseProcessCPU("8 (short) R 1 2")
	require.Error(t, err)
}

func TestParseMachineCPU(t *testing.T) {
	busy, total, steal, err := parseMachineCPU("cpu  100 5 50 800 20 3 2 7 40 0\ncpu0 50 2 25 400 10 1 1 0 20 0\n")
	require.NoError(t, err)
	// user+nice+system+irq+softirq+steal = 167 busy; + idle 800 + iowait 20.
	require.InDelta(t, 1.67, busy, 1e-9)
	require.InDelta(t, 9.87, total, 1e-9)
	require.InDelta(t, 0.07, steal, 1e-9)
	// A kernel without the steal column: none.
	_, _, steal, err = parseMachineCPU("cpu  100 5 50 800 20 3 2\n")
	require.NoError(t, err)
	require.Zero(t, steal)
	_, _, _, err = parseMachineCPU("intr 1 2 3\n")
	require.Error(t, err)
}

// TestCPUSnapshotCountsThisProcess: the test's own process is found by its
// name, and the CPU it burns between two snapshots is counted.
func TestCPUSnapshotCountsThisProcess(t *testing.T) {
	cpuNow := func() (string, float64) {
		raw, err := os.ReadFile("/proc/self/stat")
		require.NoError(t, err)
		_, name, secs, err := parseProcessCPU(string(raw))
		require.NoError(t, err)
		return name, secs
	}
	self, _ := cpuNow()
	before, err := TakeCPUSnapshot([]string{self})
	require.NoError(t, err)
	start, found := before.pids[os.Getpid()]
	require.True(t, found, "process %q (pid %d) not in the snapshot", self, os.Getpid())
	// Burn at least 50 ms of CPU, as /proc counts it.
	x := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		for i := 0; i < 1_000_000; i++ {
			x += i % 7
		}
		if _, now := cpuNow(); now-start >= 0.05 {
			break
		}
	}
	require.NotZero(t, x)
	after, err := TakeCPUSnapshot([]string{self})
	require.NoError(t, err)
	u := after.Since(before, 1)
	require.Contains(t, u.ByProcess, self)
	require.GreaterOrEqual(t, u.ByProcess[self], 0.05)
	require.Greater(t, u.CoreSeconds, 0.0)
	require.GreaterOrEqual(t, u.CoreSeconds, u.BusySeconds)
}
