package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// WorkloadControllers are the kube-controller-manager controllers the tests
// and the demo run: the garbage collector, and the controllers that make
// ReplicaSets and Pods of Deployments, Pods of ReplicaSets, StatefulSets and
// Jobs, and Jobs of CronJobs. Pods are never scheduled (there is no kubelet):
// whoever needs a running pod writes its status the way a kubelet would.
var WorkloadControllers = []string{
	"garbage-collector-controller",
	"deployment-controller",
	"replicaset-controller",
	"statefulset-controller",
	"job-controller",
	"cronjob-controller",
}

// ControllerManager is a kube-controller-manager process running against an
// envtest control plane.
type ControllerManager struct {
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
	err  error
	once sync.Once
}

// StartControllerManager starts bin/k8s/kube-controller-manager (built by
// `make tools`, next to kube-apiserver) against te's API server with the
// given controllers (WorkloadControllers when nil), as a system:masters
// user, and waits until it reports healthy. Its output goes to out (nil:
// discarded).
func StartControllerManager(te *envtest.Environment, controllers []string, out io.Writer) (*ControllerManager, error) {
	bin := filepath.Join(te.BinaryAssetsDirectory, "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("control plane binary kube-controller-manager missing in %s: run `make tools` (it builds it from the Go module proxy)", te.BinaryAssetsDirectory)
	}
	if controllers == nil {
		controllers = WorkloadControllers
	}
	user, err := te.ControlPlane.AddUser(envtest.User{Name: "aibom-test:kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager's user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "aibom-kcm-")
	if err != nil {
		return nil, err
	}
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if out == nil {
		out = io.Discard
	}
	cmd := exec.Command(bin,
		"--kubeconfig="+kcPath,
		"--authentication-kubeconfig="+kcPath,
		"--authorization-kubeconfig="+kcPath,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--leader-elect=false",
		"--controllers="+strings.Join(controllers, ","),
		// Quick enough for a test to see the collector act in about a second.
		"--concurrent-gc-syncs=5",
		"--v=1",
	)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start kube-controller-manager: %w", err)
	}
	m := &ControllerManager{cmd: cmd, dir: dir, done: make(chan struct{})}
	go func() {
		m.err = cmd.Wait()
		close(m.done)
	}()
	if err := m.waitHealthy(port, 2*time.Minute); err != nil {
		_ = m.Stop()
		return nil, err
	}
	return m, nil
}

// waitHealthy polls the manager's /healthz (served on loopback with a
// self-signed certificate: the test does not verify it).
func (m *ControllerManager) waitHealthy(port int, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a local test process on loopback
	}}
	defer hc.CloseIdleConnections()
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-m.done:
			return fmt.Errorf("kube-controller-manager exited before it was healthy: %v", m.err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cancel()
				return nil
			}
		}
		cancel()
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("kube-controller-manager not healthy within " + timeout.String())
}

// Stop ends the process (SIGTERM, then SIGKILL after 10s) and removes its
// files.
func (m *ControllerManager) Stop() error {
	m.once.Do(func() {
		_ = m.cmd.Process.Signal(os.Interrupt)
		select {
		case <-m.done:
		case <-time.After(10 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
		_ = os.RemoveAll(m.dir)
	})
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
