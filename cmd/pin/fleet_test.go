package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
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

// TestSkippedHostKeepsItsRecords: a host the run goes on without
// (skip_unreachable) keeps what the lock recorded on it: its container
// stays a floor (recorded in the lock) and in the entry's observed
// blocks, so a later run that renames the module still takes that floor
// over. The oracle is the build edge ran, 1.3.0, above the pin.
func TestSkippedHostKeepsItsRecords(t *testing.T) {
	w := newEnvWorld(t)
	w.runs("s1", "1.0.0")
	w.run("edge", "app", envApp, envApp+":1.3.0", w.builds["1.3.0"])
	const modules = `module %q {
  image  = "registry.example.org/team/app"
  policy = "exact"
  pin    = "1.1.0"
  allow_downgrade = "edge goes back to 1.1.0 with the rest"
  runs_on "s1" { container = "app" }
  runs_on "edge" { container = "app" }
}
`
	skip := func(cat string) string {
		return strings.Replace(cat, "host \"edge\" {\n  snapshot = \"edge.json\"\n}", "host \"edge\" {\n  snapshot = \"edge.json\"\n  skip_unreachable = true\n}", 1)
	}
	w.world.write([]string{"registry.example.org"}, fmt.Sprintf(modules, "app"))
	writeFile(t, filepath.Join(w.dir, "catalogue.hcl"), skip(readFileT(t, filepath.Join(w.dir, "catalogue.hcl"))))
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	edgeRecord := `observed "edge" {`
	if b := readFileT(t, filepath.Join(w.dir, "pin.lock.hcl")); !strings.Contains(b, edgeRecord) || !strings.Contains(b, w.builds["1.3.0"].digest) {
		t.Fatalf("the lock does not record edge's 1.3.0:\n%s", b)
	}
	// edge cannot be read: the run goes on without it, and its record stays.
	if err := os.Remove(filepath.Join(w.dir, "edge.json")); err != nil {
		t.Fatal(err)
	}
	r := pin(t, w.dir, "resolve")
	if r.code != exitOK || !strings.Contains(r.stderr, "pin: host edge skipped (skip_unreachable)") || !strings.Contains(r.stdout, "edge/app") {
		t.Fatalf("resolve with edge skipped: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b := readFileT(t, filepath.Join(w.dir, "pin.lock.hcl")); !strings.Contains(b, edgeRecord) || !strings.Contains(b, w.builds["1.3.0"].digest) {
		t.Errorf("the run without edge dropped what the lock recorded on it:\n%s", b)
	}
}
