package enforce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
)

// TestForEnvironment: with environments, a host is judged by its own
// environment's lock and catalogue view; a pin.module label on a host
// still covers a module whose runs_on names another environment's host.
func TestForEnvironment(t *testing.T) {
	dir := t.TempDir()
	cat := `host "s1" {
  snapshot = "s1.json"
}
host "p1" {
  snapshot = "p1.json"
}
environment "staging" {
  hosts = ["s1"]
}
environment "production" {
  hosts = ["p1"]
  from  = "staging"
}
module "app" {
  image  = "registry.example.org/app"
  policy = "at-least-running"
  runs_on "s1" { container = "app" }
  runs_on "p1" { container = "app" }
}
module "canary" {
  image  = "registry.example.org/canary"
  policy = "at-least-running"
  runs_on "s1" { container = "canary" }
}
`
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	entry := func(d string) *lock.Lock {
		return &lock.Lock{Modules: []*lock.Module{{Name: "app", Policy: lock.Policy("at-least-running"), Image: "registry.example.org/app", Digest: "sha256:" + d, Source: lock.SourcePin, Rule: lock.Rule("content"), Reason: "test"}}}
	}
	const s, p = "1111111111111111111111111111111111111111111111111111111111111111", "2222222222222222222222222222222222222222222222222222222222222222"
	lockPath := filepath.Join(dir, "pin.lock.hcl")
	for env, d := range map[string]string{"staging": s, "production": p} {
		if err := os.WriteFile(source.LockPath(lockPath, env), lock.Format(entry(d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, _, err := Load(filepath.Join(dir, "catalogue.hcl"), lockPath, source.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{"s1": s, "p1": p} {
		l := e.For(host).Lock
		if len(l.Modules) != 1 || l.Modules[0].Digest != "sha256:"+want {
			t.Errorf("For(%s).Lock = %+v, want the entry of digest %s", host, l.Modules, want[:4])
		}
	}
	// canary runs_on s1 only; a container labelled pin.module=canary on
	// p1 is covered by it there, and judged by production's lock.
	ms := e.For("p1").Covering("p1", Candidate{Name: "x", Labels: map[string]string{"pin.module": "canary"}, Image: "registry.example.org/canary:1"})
	if len(ms) != 1 || ms[0].Name != "canary" {
		t.Errorf("labelled canary on p1 covered by %v", ms)
	}
	// app on p1 is covered by production's app, whose runs_on is p1's.
	ms = e.For("p1").Covering("p1", Candidate{Name: "app", Image: "registry.example.org/app:1"})
	if len(ms) != 1 || len(ms[0].RunsOn) != 1 || ms[0].RunsOn[0].Host != "p1" {
		t.Errorf("app on p1 covered by %+v", ms)
	}
}

// TestForEnvironmentElsewhere: s1 moved from staging into production;
// staging's lock recorded what ran on it. The enforcer of s1 (and of
// production's other host) holds that entry as a floor (Elsewhere,
// resolve.Input.Elsewhere), staging's enforcer does not.
func TestForEnvironmentElsewhere(t *testing.T) {
	dir := t.TempDir()
	cat := `host "s1" {
  snapshot = "s1.json"
}
host "s2" {
  snapshot = "s2.json"
}
host "p1" {
  snapshot = "p1.json"
}
environment "staging" {
  hosts = ["s2"]
}
environment "production" {
  hosts = ["p1", "s1"]
}
module "app" {
  image  = "registry.example.org/app"
  policy = "at-least-running"
  runs_on "s1" { container = "app" }
  runs_on "s2" { container = "app" }
  runs_on "p1" { container = "app" }
}
`
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	d := "sha256:" + strings.Repeat("1", 64)
	staging := &lock.Lock{Modules: []*lock.Module{{Name: "app", Policy: lock.Policy("at-least-running"), Image: "registry.example.org/app", Digest: d, Source: lock.SourcePin, Rule: lock.Rule("content"), Reason: "test",
		Hosts: []string{"s1", "s2"}, Observed: []lock.Observation{{Host: "s1", Container: "app", Digest: d}}}}}
	lockPath := filepath.Join(dir, "pin.lock.hcl")
	if err := os.WriteFile(source.LockPath(lockPath, "staging"), lock.Format(staging), 0o644); err != nil {
		t.Fatal(err)
	}
	e, _, err := Load(filepath.Join(dir, "catalogue.hcl"), lockPath, source.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"s1", "p1"} {
		if got := e.For(h).Elsewhere; len(got) != 1 || got[0].Entry.Digest != d || got[0].Lock != source.LockPath(lockPath, "staging") {
			t.Errorf("For(%s).Elsewhere = %+v, want staging's entry", h, got)
		}
	}
	if got := e.For("s2").Elsewhere; len(got) != 0 {
		t.Errorf("For(s2).Elsewhere = %+v, want none", got)
	}
}
