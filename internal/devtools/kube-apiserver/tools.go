//go:build tools

// Package tools records the one command this module exists to build:
// scripts/kube-apiserver runs `go build k8s.io/kubernetes/cmd/kube-apiserver`
// here, so pin's tests get a real Kubernetes API server while pin's own
// go.mod never depends on k8s.io/kubernetes.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
