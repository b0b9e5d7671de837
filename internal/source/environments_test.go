package source

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

func TestLockPath(t *testing.T) {
	for _, tt := range []struct{ path, env, want string }{
		{"pin.lock.hcl", "", "pin.lock.hcl"},
		{"pin.lock.hcl", "staging", "pin.lock.staging.hcl"},
		{"deploy/pin.lock.hcl", "production", "deploy/pin.lock.production.hcl"},
		{"locks/app.hcl", "dev", "locks/app.dev.hcl"},
		{"lockfile", "dev", "lockfile.dev"},
	} {
		if got := LockPath(tt.path, tt.env); got != tt.want {
			t.Errorf("LockPath(%q, %q) = %q, want %q", tt.path, tt.env, got, tt.want)
		}
		if got := BaseLockPath(tt.want, tt.env); got != tt.path {
			t.Errorf("BaseLockPath(%q, %q) = %q, want %q", tt.want, tt.env, got, tt.path)
		}
	}
}

// TestOrphanLocks: the lock files of environments the catalogue does not
// declare (any more) are found beside the lock; the declared ones, the
// lock itself and other files are not.
func TestOrphanLocks(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"pin.lock.hcl", "pin.lock.staging.hcl", "pin.lock.qa.hcl", "pin.lock.Old.hcl", "other.lock.dev.hcl", "catalogue.hcl"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := &catalogue.Catalogue{Environments: []*catalogue.Environment{{Name: "staging"}}}
	got := OrphanLocks(filepath.Join(dir, "pin.lock.hcl"), cat)
	if want := []string{filepath.Join(dir, "pin.lock.qa.hcl")}; !slices.Equal(got, want) {
		t.Errorf("OrphanLocks = %v, want %v", got, want)
	}
	if got := OrphanLocks(filepath.Join(dir, "pin.lock.hcl"), &catalogue.Catalogue{}); len(got) != 2 {
		t.Errorf("without environments: %v, want staging's and qa's", got)
	}
}

// TestHeldElsewhere: s1 moved from staging into production. Production
// sees the entries of staging's lock (modules and retired ones) held
// against s1, whether by its hosts line or an observed block, and not
// those held against staging's own hosts or none; staging's lock
// records a moved host (Moved), production's none. Environment, given
// production's own lock path (pin propose in a work tree), finds
// staging's lock beside it.
func TestHeldElsewhere(t *testing.T) {
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "pin.lock.hcl")
	d := "sha256:" + strings.Repeat("c", 64)
	entry := func(name string, hosts []string, observed ...string) *lock.Module {
		m := &lock.Module{Name: name, Policy: "at-least-running", Image: "registry.example.org/" + name, Digest: d, Source: lock.SourcePin, Rule: "content", Reason: "test", Hosts: hosts}
		for _, h := range observed {
			m.Observed = append(m.Observed, lock.Observation{Host: h, Container: name, Digest: d})
		}
		return m
	}
	ran := entry("app", []string{"s1", "s2"}, "s1", "s2")
	listed := entry("db", []string{"s1"})
	stays := entry("cache", []string{"s2"}, "s2")
	nowhere := entry("docs", nil)
	gone := entry("old", []string{"s2"}, "s1")
	staging := &lock.Lock{Modules: []*lock.Module{ran, stays, listed, nowhere}, Retired: []*lock.Module{gone}}
	slices.SortFunc(staging.Modules, func(a, b *lock.Module) int { return strings.Compare(a.Name, b.Name) })
	if err := os.WriteFile(LockPath(lockPath, "staging"), lock.Format(staging), 0o644); err != nil {
		t.Fatal(err)
	}
	prod := &catalogue.Environment{Name: "production", Hosts: []string{"p1", "s1"}}
	stag := &catalogue.Environment{Name: "staging", Hosts: []string{"s2"}}
	cat := &catalogue.Catalogue{Environments: []*catalogue.Environment{prod, stag}}
	names := func(fs []resolve.Foreign) (out []string) {
		for _, f := range fs {
			if f.Lock != LockPath(lockPath, "staging") {
				t.Errorf("%s: lock %q", f.Entry.Name, f.Lock)
			}
			out = append(out, f.Entry.Name)
		}
		return out
	}
	got, err := HeldElsewhere(lockPath, cat, prod)
	if err != nil {
		t.Fatal(err)
	}
	if want := "app db old"; strings.Join(names(got), " ") != want {
		t.Errorf("held against production's hosts: %v, want %s", names(got), want)
	}
	in := &Inputs{Catalogue: cat}
	env, err := in.Environment("production", LockPath(lockPath, "production"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "app db old"; strings.Join(names(env.Elsewhere), " ") != want {
		t.Errorf("Environment(production).Elsewhere: %v, want %s", names(env.Elsewhere), want)
	}
	envs, err := (&Inputs{Catalogue: cat}).Environments(lockPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range envs {
		want := []MovedHost(nil)
		if e.Name == "staging" {
			want = []MovedHost{{Host: "s1", Environment: "production"}}
		}
		if !slices.Equal(e.Moved, want) {
			t.Errorf("%s: Moved %v, want %v", e.Name, e.Moved, want)
		}
	}
	if err := os.WriteFile(LockPath(lockPath, "staging"), []byte("module {"), 0o644); err != nil {
		t.Fatal(err)
	}
	var de *DiagnosticsError
	if _, err := HeldElsewhere(lockPath, cat, prod); !errors.As(err, &de) {
		t.Errorf("staging's lock does not parse: %v, want a *DiagnosticsError", err)
	}
}

// TestHeldElsewhereOrphans: every environment block removed while
// pin.lock.qa.hcl stays: the one implicit environment holds what that
// lock recorded on its hosts as floors (Elsewhere), not what it recorded
// on a host the catalogue no longer has.
func TestHeldElsewhereOrphans(t *testing.T) {
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "pin.lock.hcl")
	d := "sha256:" + strings.Repeat("d", 64)
	on := func(name, h string) *lock.Module {
		return &lock.Module{Name: name, Policy: "at-least-running", Image: "registry.example.org/" + name, Digest: d, Source: lock.SourcePin, Rule: "content", Reason: "test",
			Hosts: []string{h}, Observed: []lock.Observation{{Host: h, Container: name, Digest: d}}}
	}
	qa := &lock.Lock{Modules: []*lock.Module{on("app", "h1"), on("gone", "h9")}}
	if err := os.WriteFile(LockPath(lockPath, "qa"), lock.Format(qa), 0o644); err != nil {
		t.Fatal(err)
	}
	cat := &catalogue.Catalogue{Hosts: []*catalogue.Host{{Name: "h1"}}}
	envs, err := (&Inputs{Catalogue: cat}).Environments(lockPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := envs[0].Elsewhere; len(got) != 1 || got[0].Entry.Name != "app" || got[0].Lock != LockPath(lockPath, "qa") {
		t.Errorf("Elsewhere = %+v, want qa's app alone", got)
	}
	env, err := (&Inputs{Catalogue: cat}).Environment("", lockPath)
	if err != nil || len(env.Elsewhere) != 1 {
		t.Errorf("Environment(\"\"): %v, Elsewhere %+v", err, env.Elsewhere)
	}
}
