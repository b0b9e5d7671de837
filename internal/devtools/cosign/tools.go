//go:build tools

// Package tools records the one command this module exists to build:
// scripts/cosign runs `go build github.com/sigstore/cosign/v2/cmd/cosign`
// here, so that pin's signature tests are checked against the real cosign
// CLI while pin's own go.mod never depends on cosign.
package tools

import _ "github.com/sigstore/cosign/v2/cmd/cosign"
