//go:build !unix

package main

// permissionHint has nothing to add where folders have no numeric owner.
func permissionHint(error) string { return "" }
