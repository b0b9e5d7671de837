package main

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock returns the lines of the first fenced block of README.md
// after the line holding marker.
func readmeBlock(t *testing.T, marker string) []string {
	t.Helper()
	return docBlock(t, "README.md", marker)
}

// docBlock returns the lines of the first fenced block of the document
// (a path from the repository's root: README.md, docs/guides/….md) after
// the text marker.
func docBlock(t *testing.T, doc, marker string) []string {
	t.Helper()
	s := string(mustRead(t, filepath.Join(repoRoot, doc)))
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%s has no %q", doc, marker)
	}
	s = s[i:]
	start := strings.Index(s, "\n```")
	s = s[start+4:]
	s = s[strings.Index(s, "\n")+1:]
	return strings.Split(s[:strings.Index(s, "```")], "\n")
}

// reproduces checks that a document's lines are lines of got, in order,
// word for word: a line "..." stands for lines left out, and "…" in a line
// for characters left out.
func reproduces(t *testing.T, what string, readme []string, got string) {
	t.Helper()
	lines := strings.Split(got, "\n")
	at := 0
	for _, want := range readme {
		if strings.TrimSpace(want) == "..." || want == "" {
			continue
		}
		parts := strings.Split(want, "…")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		re := regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
		found := false
		for ; at < len(lines); at++ {
			if re.MatchString(lines[at]) {
				found, at = true, at+1
				break
			}
		}
		if !found {
			t.Errorf("%s: the document's line is not reproduced (in order):\n%s\ngot:\n%s", what, want, got)
			return
		}
	}
}

// TestREADMEWorkedExample: the README's worked example reproduces word
// for word: the plan of "pin resolve" on the incident, and the refusal
// once forge's policy is exact.
func TestREADMEWorkedExample(t *testing.T) {
	dir := incidentDir(t, nil)
	r := pin(t, dir, "resolve")
	if r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	reproduces(t, "pin resolve", readmeBlock(t, "`go run ./cmd/pin resolve` on a fresh clone prints"), r.stdout)
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, "policy  = \"at-least-running\"\n  pin     = \"1.22.6@", "policy  = \"exact\"\n  pin     = \"1.22.6@", 1)
	})
	r = pin(t, dir, "resolve")
	if r.code != exitFindings {
		t.Fatalf("exact: exit %d\n%s", r.code, r.stderr)
	}
	reproduces(t, "pin resolve, forge exact", readmeBlock(t, "Change forge's policy to `exact`"), r.stderr)
}

// TestGuideEnvironments: the environments guide's example reproduces word
// for word, from the repository's root as it says.
func TestGuideEnvironments(t *testing.T) {
	const guide = "docs/guides/environments.md"
	dir := t.TempDir()
	for _, d := range []string{"environments", "incident"} {
		if err := os.CopyFS(filepath.Join(dir, "examples", d), os.DirFS(filepath.Join(repoRoot, "examples", d))); err != nil {
			t.Fatal(err)
		}
	}
	r := pin(t, dir, "--catalogue", "examples/environments", "--lock", "examples/environments/pin.lock.hcl", "resolve")
	if r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	reproduces(t, "pin resolve, two environments", docBlock(t, guide, "`pin --catalogue examples/environments --lock examples/environments/pin.lock.hcl resolve`"), r.stdout)
	flags := []string{"--catalogue", "examples/environments", "--lock", "examples/environments/pin.lock.hcl"}
	r = pin(t, dir, append(flags, "status")...)
	if r.code != exitFindings {
		t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin status, two environments", docBlock(t, guide, "`pin --catalogue examples/environments --lock examples/environments/pin.lock.hcl status`"), trimLines(r.stdout))
	// Staging-1's health check failing: the promotion is refused, and no
	// lock changes.
	snap := filepath.Join(dir, "examples", "environments", "staging-1.json")
	healthy := mustRead(t, snap)
	sick := strings.Replace(string(healthy), `"started_at": "2026-11-27T09:30:00Z"`,
		`"started_at": "2026-11-27T09:30:00Z",
      "health": "unhealthy",
      "health_since": "2026-11-30T08:00:00Z"`, 1)
	if sick == string(healthy) {
		t.Fatal("staging-1.json has no started_at to mark unhealthy after")
	}
	if err := os.WriteFile(snap, []byte(sick), 0o644); err != nil {
		t.Fatal(err)
	}
	locks := readLocks(t, filepath.Join(dir, "examples", "environments"))
	r = pin(t, dir, append(flags, "promote", "staging", "production")...)
	if r.code != exitFindings {
		t.Fatalf("promote of an unhealthy build: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin promote, unhealthy", docBlock(t, guide, "Had staging-1's health check failed"), r.stdout+r.stderr)
	if after := readLocks(t, filepath.Join(dir, "examples", "environments")); !maps.Equal(locks, after) {
		t.Errorf("a refused promotion changed a lock")
	}
	if err := os.WriteFile(snap, healthy, 0o644); err != nil {
		t.Fatal(err)
	}
	r = pin(t, dir, append(flags, "promote", "staging", "production")...)
	if r.code != exitOK {
		t.Fatalf("promote: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin promote staging production", docBlock(t, guide, "`pin --catalogue examples/environments --lock examples/environments/pin.lock.hcl promote staging production`"), r.stdout)
	if r := pin(t, dir, append(flags, "status")...); r.code != exitOK || !strings.Contains(r.stdout, "not-rolled-out") {
		t.Errorf("status after the promotion: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// readLocks reads every lock file in dir, by name.
func readLocks(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join(dir, "pin.lock*.hcl"))
	for _, p := range paths {
		m[filepath.Base(p)] = string(mustRead(t, p))
	}
	if len(m) == 0 {
		t.Fatalf("no lock in %s", dir)
	}
	return m
}

// trimLines drops the trailing blanks of each line (a table's last
// column, empty).
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// TestREADMEShape: the README stays short, and its first screen holds the
// two commands: pin on the repository's own catalogue, and the tests.
func TestREADMEShape(t *testing.T) {
	lines := strings.Split(strings.TrimRight(string(mustRead(t, filepath.Join(repoRoot, "README.md"))), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; keep it to 200 and move the rest to docs/guides, docs/reference.md or CONTRIBUTING.md", len(lines))
	}
	first := strings.Join(lines[:min(40, len(lines))], "\n")
	for _, cmd := range []string{"go run ./cmd/pin resolve", "./scripts/test"} {
		if !strings.Contains(first, cmd) {
			t.Errorf("README.md's first 40 lines do not hold %q", cmd)
		}
	}
}
