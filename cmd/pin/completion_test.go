package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// complete runs cobra's hidden __complete command in-process and returns
// the candidates, without the trailing directive line.
func complete(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	r := pin(t, dir, append([]string{"__complete"}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %v: exit %d\n%s", args, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %v: no directive line in %q", args, r.stdout)
	}
	if d := lines[len(lines)-1]; d != ":4" { // ShellCompDirectiveNoFileComp
		t.Errorf("__complete %v: directive %s, want :4 (no file names)", args, d)
	}
	return lines[:len(lines)-1]
}

func TestCompletions(t *testing.T) {
	dir := incidentDir(t, func(s string) string {
		return s + "\nhost \"mesh-2\" {\n  snapshot = \"" + repoRoot + "/examples/incident/mesh-1.json\"\n}\n"
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"resolve", ""}, "analytics forge packages"},
		{[]string{"resolve", "f"}, "forge"},
		{[]string{"resolve", "forge", ""}, "analytics packages"}, // named ones are not offered again
		{[]string{"plan", ""}, "mesh-1 mesh-2"},
		{[]string{"plan", "mesh-2"}, "mesh-2"},
		{[]string{"plan", "mesh-1", ""}, ""}, // one host only
		{[]string{"lock", "--from-host", ""}, "mesh-1 mesh-2"},
		{[]string{"lock", "--from-host", "mesh-1"}, "mesh-1"},
		// Another catalogue, by flag: the names come from it.
		{[]string{"--catalogue", filepath.Join(repoRoot, "cmd/pin/testdata/outdated.fleet.hcl"), "resolve", "forge"}, "forge forge-lts forge-nightly"},
		// Environments, of a catalogue that declares them.
		{[]string{"--catalogue", filepath.Join(repoRoot, "examples/environments"), "resolve", "--environment", ""}, "production staging"},
		{[]string{"--catalogue", filepath.Join(repoRoot, "examples/environments"), "export", "--environment", "s"}, "staging"},
		{[]string{"outdated", "--environment", ""}, ""},
	} {
		got := strings.Join(complete(t, dir, tc.args...), " ")
		if got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
	// No catalogue: nothing to offer, and no error.
	if got := complete(t, t.TempDir(), "resolve", ""); len(got) != 0 {
		t.Errorf("without a catalogue: %q", got)
	}
}
