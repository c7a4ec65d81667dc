// Package controlplane starts the local control plane (a real kube-apiserver
// and etcd, built from the Go module proxy into bin/k8s by `make tools`) with
// the AIBOM CRD installed, for the envtest suites and the demo.
package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// RepoRoot finds the repository root: the nearest directory upward from the
// working directory whose go.mod declares this module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/aibom-dev/aibom\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("repository root not found above the working directory")
		}
		dir = parent
	}
}

// New returns an envtest environment using bin/k8s (or KUBEBUILDER_ASSETS
// when set) with the CRDs of config/crd/bases and any extra CRD directories.
func New(extraCRDDirs ...string) (*envtest.Environment, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("control plane binary %s missing in %s: run `make tools` (it builds them from the Go module proxy)", bin, assets)
		}
	}
	dirs := []string{filepath.Join(root, "config", "crd", "bases")}
	for _, d := range extraCRDDirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		dirs = append(dirs, d)
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     dirs,
		ErrorIfCRDPathMissing: true,
	}, nil
}
