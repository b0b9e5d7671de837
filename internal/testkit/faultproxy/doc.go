// Package faultproxy puts an HTTP proxy in front of a real registry, for
// tests, and makes it misbehave on the requests a test chooses: answer with
// a status (429 with Retry-After, 5xx), reset the connection, stall, cut
// the body short, corrupt it, send a body larger than any manifest, or
// rewrite the answer's headers (a Link that loops or leaves the host, a
// WWW-Authenticate challenge that names another token server).
//
// Requests that no fault matches are forwarded to the registry unchanged,
// Authorization header included, so that the registry answers everything
// else as it really does: a fault is the only thing that is not real.
// Every request is recorded with the fault it met and the bytes the proxy
// managed to write, so that a test can assert what reached the wire and
// that an oversized body was not read to its end.
//
// It imports nothing of pin's, so that any package's tests may use it.
package faultproxy
