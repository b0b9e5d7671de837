//go:build tools

// Package tools records the one command this module exists to build:
// scripts/helm runs `go build helm.sh/helm/v4/cmd/helm` here, so that
// pin's Helm values tests render charts with the real helm CLI while
// pin's own go.mod never depends on helm.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
