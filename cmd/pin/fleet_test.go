package main

import (
	"net"
	"strings"
	"testing"
)

// TestSkipUnreachable: a host that cannot be read refuses the modules
// that run on it (never resolved without its floors), and names it;
// with skip_unreachable the run goes on without it and says so.
func TestSkipUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	withEdge := func(skip string) func(string) string {
		return func(s string) string {
			s = strings.Replace(s, `runs_on "mesh-1" { container = "forgejo" }`,
				`runs_on "mesh-1" { container = "forgejo" }
  runs_on "edge" { container = "forgejo" }`, 1)
			return s + "\nhost \"edge\" {\n  docker = \"tcp://" + addr + "\"\n" + skip + "}\n"
		}
	}

	r := pin(t, incidentDir(t, withEdge("")), "resolve", "--host-timeout=20s")
	if r.code == 0 || !strings.Contains(r.stderr, "edge") || !strings.Contains(r.stderr, "forge") {
		t.Fatalf("unreachable host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = pin(t, incidentDir(t, withEdge("  skip_unreachable = true\n")), "resolve", "--host-timeout=20s")
	if r.code != 0 || !strings.Contains(r.stderr, "pin: host edge skipped (skip_unreachable)") {
		t.Fatalf("skippable host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
