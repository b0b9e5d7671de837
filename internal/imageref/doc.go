// Package imageref finds the image references of YAML files (Compose files
// and Kubernetes manifests) with their file and line, and rewrites them in
// place, keeping every other byte: comments, key order, quoting and
// indentation.
//
// It parses with github.com/goccy/go-yaml only to learn where each image
// scalar is; a rewrite splices the new text into the original bytes at that
// place, so nothing else of the file passes through a printer. It does not
// interpolate variables, merge files or decide which reference to write:
// package compose reads Compose projects and package export decides.
package imageref
