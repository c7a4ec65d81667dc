//go:build tools

// Package tools pins the binaries the project builds from the Go module
// proxy: the envtest control plane (kube-apiserver, etcd, kube-controller-manager) and controller-gen.
// Nothing here is downloaded from anywhere else.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
