// Package incident holds the offline reproduction of the incident pin exists
// for: an OCI image layout standing in for the registry (registry/) and a
// snapshot of host mesh-1 (mesh-1.json). Both are generated, small and
// reproducible: run "go generate ./examples/incident" after changing gen/.
package incident

//go:generate go run ./gen
