package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPromoteSpendsTheWords: allow_downgrade accepts one downgrade, in a
// promotion as in pin resolve. The words let staging's older build into
// production once; production then starts a newer build by hand, and
// the same words do not let the next older build in below it (refused,
// every lock byte for byte as it was); new words do.
func TestPromoteSpendsTheWords(t *testing.T) {
	w := newEnvWorld(t)
	write := func(words string) {
		w.writePromote()
		mods := promoteModules
		if words != "" {
			mods = strings.Replace(mods, `policy = "at-least-running"`, `policy = "at-least-running"`+"\n  allow_downgrade = \""+words+"\"", 1)
		}
		w.world.write([]string{"registry.example.org"}, mods)
	}
	w.runsSince("s1", "1.0.0", 100*time.Hour)
	w.runsSince("s2", "1.0.0", 100*time.Hour)
	w.runsSince("p1", "1.2.0", 100*time.Hour)
	write("")
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	prod := filepath.Join(w.dir, "pin.lock.production.hcl")

	words := "1.2 corrupts the reports table; back to 1.1 until the fix"
	w.runsSince("s1", "1.1.0", 48*time.Hour)
	w.runsSince("s2", "1.1.0", 48*time.Hour)
	write(words)
	if r := pin(t, w.dir, "promote", "staging", "production"); r.code != exitOK {
		t.Fatalf("the stated downgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b := readFileT(t, prod); !strings.Contains(b, w.builds["1.1.0"].digest) || !strings.Contains(b, words) {
		t.Fatalf("production's lock after the stated downgrade:\n%s", b)
	}

	// Production starts 1.3.0 by hand; staging moves to 1.2.0 and soaks.
	w.runsSince("p1", "1.3.0", 10*time.Hour)
	w.runsSince("s1", "1.2.0", 48*time.Hour)
	w.runsSince("s2", "1.2.0", 48*time.Hour)
	write(words)
	before := map[string]string{}
	for _, f := range []string{"pin.lock.staging.hcl", "pin.lock.production.hcl"} {
		before[f] = readFileT(t, filepath.Join(w.dir, f))
	}
	r := pin(t, w.dir, "promote", "staging", "production")
	if r.code != exitFindings || !strings.Contains(r.stderr, "(floor)") || !strings.Contains(r.stderr, "A reason accepts one downgrade") {
		t.Errorf("the same words for another downgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for f, b := range before {
		if after, _ := os.ReadFile(filepath.Join(w.dir, f)); string(after) != b {
			t.Errorf("%s changed on a refusal", f)
		}
	}

	write("1.3 too: the same reports bug, fixed in 1.4")
	if r := pin(t, w.dir, "promote", "staging", "production"); r.code != exitOK || !strings.Contains(readFileT(t, prod), w.builds["1.2.0"].digest) {
		t.Errorf("new words: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPromoteModuleNotInTO: naming a module that runs on no host of TO
// is exit 2, nothing written: its entry would be held against no host
// of production, and the next resolve would retire it.
func TestPromoteModuleNotInTO(t *testing.T) {
	w := newEnvWorld(t)
	w.runsSince("s1", "1.1.0", 48*time.Hour)
	w.runsSince("s2", "1.1.0", 48*time.Hour)
	w.runsSince("p1", "1.0.0", 100*time.Hour)
	w.run("s1", "canary", envApp, envApp+":1.1.0", w.builds["1.1.0"])
	w.writePromote()
	w.world.write([]string{"registry.example.org"}, promoteModules+`
module "canary" {
  image  = "registry.example.org/team/app"
  policy = "at-least-running"
  runs_on "s1" { container = "canary" }
}
`)
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	prod := filepath.Join(w.dir, "pin.lock.production.hcl")
	before := readFileT(t, prod)
	r := pin(t, w.dir, "promote", "staging", "production", "canary")
	if r.code != exitInput || !strings.Contains(r.stderr, `module "canary" does not run in environment production`) {
		t.Errorf("promote canary: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if readFileT(t, prod) != before {
		t.Error("production's lock changed")
	}
	if r := pin(t, w.dir, "promote", "staging", "production"); r.code != exitOK || strings.Contains(readFileT(t, prod), `module "canary"`) {
		t.Errorf("promote all: exit %d (canary must be left out)\n%s%s", r.code, r.stdout, r.stderr)
	}
}
