package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// repoRoot is where the default catalogue lives.
var repoRoot, _ = filepath.Abs("../..")

// TestMain removes what the tests built once for all of them (buildPin).
func TestMain(m *testing.M) {
	code := m.Run()
	removeBuilt()
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// pin runs the CLI in-process, in dir, with a fixed clock.
func pin(t *testing.T, dir string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code := runWithClock(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) })
	return result{code, out.String(), errb.String()}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-golden +got):\n%s", name, diff)
	}
}

// incidentDir copies the default catalogue into a temporary folder, with
// its paths pointing at the repository's examples.
func incidentDir(t *testing.T, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(repoRoot, "catalogue.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(src), `"examples/`, `"`+repoRoot+`/examples/`)
	if edit != nil {
		s = edit(s)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestResolveIncident(t *testing.T) {
	dir := incidentDir(t, nil)
	r := pin(t, dir, "resolve")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	golden(t, "incident.plan.txt", r.stdout)
	first, err := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "incident.lock.hcl", string(first))

	// Run again: same bytes, nothing to change, --check passes.
	r = pin(t, dir, "resolve")
	second, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if r.code != 0 || !bytes.Equal(first, second) || !strings.Contains(r.stdout, "Plan: 3 unchanged.") {
		t.Fatalf("second run: exit %d, lock changed %v\n%s", r.code, !bytes.Equal(first, second), r.stdout)
	}
	if r := pin(t, dir, "resolve", "--check"); r.code != 0 {
		t.Fatalf("--check on an up-to-date lock: exit %d\n%s", r.code, r.stderr)
	}
	r = pin(t, dir, "resolve", "--format", "json")
	golden(t, "incident.plan.json", r.stdout)
}

// TestResolveRemovesStaleTemp: a temporary file that a killed run left
// beside the lock is removed by the next run that writes the lock, and -v
// says so; --check leaves it.
func TestResolveRemovesStaleTemp(t *testing.T) {
	dir := incidentDir(t, nil)
	stale := filepath.Join(dir, ".pin.lock.hcl8675309")
	if err := os.WriteFile(stale, []byte("module"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := pin(t, dir, "resolve", "--check"); r.code != 1 {
		t.Fatalf("--check: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("--check removed %s: %v", stale, err)
	}
	r := pin(t, dir, "resolve", "-v")
	if r.code != 0 || !strings.Contains(r.stderr, "pin: removed "+filepath.Base(stale)+", left by a run that was killed") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", stale, err)
	}
}

func TestResolveCheckReportsChange(t *testing.T) {
	dir := incidentDir(t, nil)
	r := pin(t, dir, "resolve", "--check")
	if r.code != 1 || !strings.Contains(r.stderr, "pin.lock.hcl would change") {
		t.Fatalf("--check with no lock: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); !os.IsNotExist(err) {
		t.Fatal("--check wrote the lock")
	}
}

// TestResolveRefusesExactDowngrade: a host runs something newer than an
// exact pin. pin exits 1, names the module, the host, both images and the
// rule, and leaves the old lock byte-identical.
func TestResolveRefusesExactDowngrade(t *testing.T) {
	dir := incidentDir(t, nil)
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatalf("setup: %s", r.stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	cat := filepath.Join(dir, "catalogue.hcl")
	src, _ := os.ReadFile(cat)
	exact := strings.Replace(string(src), `policy  = "at-least-running"
  pin     = "1.22.6@`, `policy  = "exact"
  pin     = "1.22.6@`, 1)
	if exact == string(src) {
		t.Fatal("catalogue edit did not apply")
	}
	os.WriteFile(cat, []byte(exact), 0o644)
	r := pin(t, dir, "resolve")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		`module "forge": refusing a downgrade`,
		"mesh-1/forgejo",
		"registry.example.org/forge/forgejo:1.22.6@sha256:e8cb3b3125e6",
		"registry.example.org/forge/forgejo:1.27.3@sha256:fe63af8ae93d",
		"version 1.22.6", "version 1.27.3", "built 2026-09-01",
		`ordered by rule "version": version 1.22.6 < 1.27.3`,
		`allow_downgrade = "<why>" and restore =`,
		"pin.lock.hcl left unchanged",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if !bytes.Equal(before, after) {
		t.Error("the lock changed after a refused run")
	}
}

// TestResolveRefusesUnknownOrder: the host's image has only an epoch build
// date and no version, so it cannot be ordered against the pin.
func TestResolveRefusesUnknownOrder(t *testing.T) {
	dir := incidentDir(t, nil)
	snap, _ := os.ReadFile(filepath.Join(repoRoot, "examples/incident/mesh-1.json"))
	s := regexp.MustCompile(`"created": "2026-09-17T00:00:00Z"`).ReplaceAllString(string(snap), `"created": "1970-01-01T00:00:00Z"`)
	s = strings.ReplaceAll(s, `"org.opencontainers.image.created": "2026-09-17T00:00:00Z",`, ``)
	os.WriteFile(filepath.Join(dir, "mesh-1.json"), []byte(s), 0o644)
	cat := filepath.Join(dir, "catalogue.hcl")
	src, _ := os.ReadFile(cat)
	os.WriteFile(cat, []byte(strings.Replace(string(src), repoRoot+"/examples/incident/mesh-1.json", "mesh-1.json", 1)), 0o644)
	r := pin(t, dir, "resolve")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`module "analytics": refusing: the pin cannot be ordered against what mesh-1/analytics runs`,
		"build date 1970-01-01T00:00:00Z (not plausible: treated as unknown)",
		"built 2026-08-20",
		`to decide, in module "analytics"`,
		`write pin = "latest@sha256:894d9cb601d6`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); !os.IsNotExist(err) {
		t.Error("a refused run wrote a lock")
	}
}

func TestResolveBadCatalogue(t *testing.T) {
	dir := t.TempDir()
	bad, err := os.ReadFile(filepath.Join(repoRoot, "internal/catalogue/testdata/bad/five.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), bad, 0o644)
	r := pin(t, dir, "resolve")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2", r.code)
	}
	for _, want := range []string{
		"catalogue.hcl:8:6: error: Duplicate host",
		"catalogue.hcl:14:12: error: Unknown policy",
		"catalogue.hcl:15:12: error: Invalid pin",
		"catalogue.hcl:16:11: error: Undefined host",
		"catalogue.hcl:24:3: error: Unsupported argument",
		"catalogue.hcl:30:16: error: Invalid semver constraint",
		"on catalogue.hcl line 14, in module \"forge\":",
		"Write one of \"exact\", \"at-least-running\", \"track-upstream\".",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestResolveInputErrors(t *testing.T) {
	t.Run("bad flag", func(t *testing.T) {
		if r := pin(t, t.TempDir(), "resolve", "--no-such-flag"); r.code != 2 {
			t.Fatalf("exit %d", r.code)
		}
	})
	t.Run("bad format", func(t *testing.T) {
		if r := pin(t, t.TempDir(), "resolve", "--format", "yaml"); r.code != 2 || !strings.Contains(r.stderr, "--format") {
			t.Fatalf("exit %d %s", r.code, r.stderr)
		}
	})
	t.Run("missing catalogue", func(t *testing.T) {
		if r := pin(t, t.TempDir(), "resolve"); r.code != 2 || !strings.Contains(r.stderr, "catalogue.hcl") {
			t.Fatalf("exit %d %s", r.code, r.stderr)
		}
	})
	t.Run("mangled lock stays", func(t *testing.T) {
		dir := incidentDir(t, nil)
		mangled := []byte("module \"forge\" {\n  image = \"forgejo\"\n")
		os.WriteFile(filepath.Join(dir, "pin.lock.hcl"), mangled, 0o644)
		r := pin(t, dir, "resolve")
		if r.code != 2 || !strings.Contains(r.stderr, "pin.lock.hcl:") {
			t.Fatalf("exit %d %s", r.code, r.stderr)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(got, mangled) {
			t.Error("a mangled lock was overwritten")
		}
	})
}

// TestResolveHostFailure: a host that cannot be read gives exit 3, a
// message naming it, and an untouched lock.
func TestResolveHostFailure(t *testing.T) {
	dir := incidentDir(t, nil)
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	cat := filepath.Join(dir, "catalogue.hcl")
	src, _ := os.ReadFile(cat)
	os.WriteFile(cat, []byte(strings.Replace(string(src), "mesh-1.json", "gone.json", 1)), 0o644)
	r := pin(t, dir, "resolve")
	if r.code != 3 || !strings.Contains(r.stderr, "host mesh-1") || !strings.Contains(r.stderr, "gone.json") {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if !bytes.Equal(before, after) {
		t.Error("the lock changed after a failed run")
	}
}
