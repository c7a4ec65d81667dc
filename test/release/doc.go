// Package release checks what a release ships, as a platform team would
// install it: the Helm chart (lint, render with default and non-default
// values, server-side dry-run of every object against a real API server,
// RBAC identical to what the envtest suites run with, no drift from
// config/default), one version everywhere (VERSION, the binaries, the
// documents, the chart, the kustomize image), and a qualification run of the
// real controller binary installed from the rendered chart.
//
// It is its own Go module so that the Helm SDK and kustomize stay out of the
// controller's dependency graph; `make chart-lint` and `make test` run it.
package release
