package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The author's loop, end to end: `make dev` with a folder of CRDs and
// samples and a profile starts a control plane and the controller, applies
// the samples, shows the sample's AIBOM once it is written, and stops
// cleanly (exit 0, control plane stopped) on Ctrl-C.
func TestDevStartsAppliesAFolderAndStopsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the controller and starts a control plane; skipped with -short")
	}
	if _, err := os.Stat("../../bin/k8s/kube-apiserver"); err != nil {
		t.Fatalf("bin/k8s/kube-apiserver missing: run `make tools` (%v)", err)
	}
	dir := t.TempDir()
	for out, pkg := range map[string]string{"dev": ".", "aibom-controller": "../../cmd/controller"} {
		if b, err := exec.Command("go", "build", "-o", filepath.Join(dir, out), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	cmd := exec.Command(filepath.Join(dir, "dev"), "-dir", "testdata/acme", "-adapter-profile", "testdata/acme-profile.yaml",
		"-controller", filepath.Join(dir, "aibom-controller"), "-namespace", "dev-test")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var seen []string
	waitFor := func(what string, match func(string) bool, within time.Duration) {
		t.Helper()
		deadline := time.After(within)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("dev exited before %s; it printed:\n%s", what, strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				if match(l) {
					return
				}
			case <-deadline:
				t.Fatalf("no %s within %s; dev printed:\n%s", what, within, strings.Join(seen, "\n"))
			}
		}
	}
	waitFor("applied samples", func(l string) bool { return strings.HasPrefix(l, "dev: applied ") }, 2*time.Minute)
	waitFor("the sample's AIBOM, ready", func(l string) bool {
		return strings.HasPrefix(l, "dev-test ") && strings.Contains(l, "ModelServer") && strings.Contains(l, "True")
	}, 2*time.Minute)

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitFor("the control plane stopping", func(l string) bool { return l == "dev: stopping the control plane" }, time.Minute)
	for l := range lines {
		seen = append(seen, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dev did not stop cleanly on Ctrl-C: %v; it printed:\n%s", err, strings.Join(seen, "\n"))
	}
}
