package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUnreachableRegistryAdvice: a run whose registries cannot be reached
// exits 3 and never ends saying the lock is up to date; it says what to
// do (--offline, a mirror, the timeout), and a registry host that is a
// near miss of a registry block of the catalogue (registy.example.org
// beside registry "registry.example.org") says so.
func TestUnreachableRegistryAdvice(t *testing.T) {
	dir := incidentDir(t, nil)
	if r := pin(t, dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	appendFile(t, filepath.Join(dir, "catalogue.hcl"), `
module "web" {
  image  = "registy.example.org/team/web"
  policy = "track-upstream"
}

module "api" {
  image  = "127.0.0.1:1/team/api"
  policy = "track-upstream"
}
`)
	r := pin(t, dir, "resolve", "--timeout", "5s")
	if r.code != exitSource {
		t.Errorf("exit %d, want %d", r.code, exitSource)
	}
	if strings.Contains(r.stdout, "up to date") {
		t.Errorf("a run with errors ends up to date:\n%s", r.stdout)
	}
	// The system's words for a failed lookup or connection vary (the
	// resolver's address, "no such host" or "server misbehaving").
	network := regexp.MustCompile(`(reaching [^:\s]+(?::\d+)?): .*?(; pin\.lock\.hcl left unchanged|\n)`)
	got := network.ReplaceAllString(fmt.Sprintf("exit %d\n%s%s", r.code, r.stdout, r.stderr), "$1: NETWORK ERROR$2")
	golden(t, "messages.unreachable-registry.txt", got)

	// pin outdated, the CI check, gives the same advice.
	r = pin(t, dir, "outdated", "--timeout", "5s")
	got = network.ReplaceAllString(fmt.Sprintf("exit %d\n%s%s", r.code, r.stdout, r.stderr), "$1: NETWORK ERROR$2")
	golden(t, "messages.unreachable-registry-outdated.txt", got)
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
