// Package idle tests what the controller costs while nothing changes and
// how its caches follow opt-in, against a real API server: no request at
// all in a quiet period, a watch that stops silently (blackholed by a
// loopback proxy) restarted by its progress deadline, and the caches filled
// when a namespace opts in and emptied when it opts out.
package idle

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aibom-dev/aibom/test/envtest/harness"
)

var env *harness.Env

const (
	eventually = 60 * time.Second
	tick       = 100 * time.Millisecond
	digest     = "9b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c"
)

func TestMain(m *testing.M) {
	var err error
	env, err = harness.StartEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}
