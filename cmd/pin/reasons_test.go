package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestReasonsNameWhatDecided: a plan's reasons name what decided. A
// module following the floating tag artful (which names 1.1.0) names the
// tag, not the version alone; two builds of latest 0.8 s apart are
// ordered by dates printed to the tenth of a second. The plan is golden,
// in text and JSON.
func TestReasonsNameWhatDecided(t *testing.T) {
	w := newWorld(t)
	const app, web = "registry.example.org/team/app", "registry.example.org/team/web"
	w.tag(app, "1.0.0", w.build("app 1.0.0", "1.0.0", "2026-01-01T00:00:00Z"))
	w.tag(app, "artful", w.build("app 1.1.0", "1.1.0", "2026-03-01T00:00:00Z"))
	w.run("h1", "app", app, app+":1.0.0", w.build("app 1.0.0", "1.0.0", "2026-01-01T00:00:00Z"))
	first := w.build("web, the first build", "", "2026-09-17T00:00:00Z")
	w.tag(web, "latest-1", first)
	w.run("h1", "web", web, web+":latest", w.build("web, the second build", "", "2026-09-17T00:00:00.8Z"))
	w.write([]string{"registry.example.org"}, fmt.Sprintf(`module "app" {
  image  = %q
  policy = "track-upstream"
  tag    = "artful"
  runs_on "h1" { container = "app" }
}

module "web" {
  image  = %q
  policy = "at-least-running"
  pin    = "latest@%s"
  runs_on "h1" { container = "web" }
}
`, app, web, first.digest))
	text := pin(t, w.dir, "resolve", "--check")
	js := pin(t, w.dir, "resolve", "--check", "--format", "json")
	golden(t, "reasons.plan.txt", text.stdout)
	golden(t, "reasons.plan.json", js.stdout)
	for _, want := range []string{
		"the floating tag artful, now 1.1.0; newer than what h1/app runs (version 1.1.0 > 1.0.0): an upgrade",
		"(built 2026-09-17T00:00:00.8Z > 2026-09-17T00:00:00.0Z)",
	} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("the plan does not say %q:\n%s", want, text.stdout)
		}
	}
}

// TestPlanSaysThePreviousLockWon: forge's container is recreated under
// another name; the previous lock wins, and the plan says so ("won the
// previous lock"), not the side that won when it was written. Then
// forge's image moves to another registry (which mirrors the same
// images): the lock keeps the entry, and the repository it was locked
// from; the plan says that the repository changed, what the lock keeps
// and why, and what to write. What it says is written, and the same digest
// is locked from the new registry. Plans are golden, text and JSON.
func TestPlanSaysThePreviousLockWon(t *testing.T) {
	dir, _ := incidentMirror(t)
	if r := pin(t, dir, "resolve"); r.code != exitOK {
		t.Fatalf("setup: exit %d\n%s", r.code, r.stderr)
	}
	forge := lockedDigest(t, readLock(t, dir), "forge")
	editFile(t, filepath.Join(dir, "mesh-1.json"), func(s string) string {
		return strings.Replace(s, `"name": "forgejo"`, `"name": "forgejo-2"`, 1)
	})
	var text, js strings.Builder
	step := func(what string, args ...string) result {
		t.Helper()
		j := pin(t, dir, append(append([]string{}, args...), "--format", "json", "--check")...)
		fmt.Fprintf(&js, "# %s\n%s\n", what, j.stdout)
		r := pin(t, dir, args...)
		fmt.Fprintf(&text, "# %s\n$ pin %s\nexit %d\n%s%s\n", what, strings.Join(args, " "), r.code, r.stdout, r.stderr)
		if r.code != exitOK && r.code != exitFindings {
			t.Fatalf("%s: exit %d\n%s%s", what, r.code, r.stdout, r.stderr)
		}
		return j
	}
	step("forgejo recreated as forgejo-2", "resolve", "--check", "forge")
	if !strings.Contains(text.String(), "  won      the previous lock, ordered by version\n") {
		t.Errorf("the plan does not say that the previous lock won:\n%s", text.String())
	}

	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		s = strings.Replace(s, `image   = "registry.example.org/forge/forgejo"`, `image   = "mirror.example.net/forge/forgejo"`, 1)
		return s + "\nregistry \"mirror.example.net\" {\n  mirror = \"registry\"\n}\n"
	})
	r := step("forge's image moves to mirror.example.net", "resolve", "forge")
	var p planOutput
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || len(p.Modules) != 1 || p.Modules[0].Repository == nil {
		t.Fatalf("no repository said: %v\n%s", err, r.stdout)
	}
	m := p.Modules[0]
	if m.New.Image != "registry.example.org/forge/forgejo" || m.Won != "previous-lock" {
		t.Errorf("new %+v, won %q", m.New, m.Won)
	}
	write := regexp.MustCompile(`write (pin = "[^"]+")`).FindStringSubmatch(m.Repository.Why)
	if write == nil {
		t.Fatalf("nothing to write in %q", m.Repository.Why)
	}
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return regexp.MustCompile(`pin     = "1\.22\.6@[^"]+"`).ReplaceAllString(s, strings.Replace(write[1], "pin = ", "pin     = ", 1))
	})
	step("the pin it says to write", "resolve", "forge")
	lock := readLock(t, dir)
	if got := block(lock, "forge"); !strings.Contains(got, `image   = "mirror.example.net/forge/forgejo"`) || lockedDigest(t, lock, "forge") != forge {
		t.Errorf("with the pin written: want %s from mirror.example.net/forge/forgejo:\n%s", forge, got)
	}
	golden(t, "reasons.kept.txt", text.String())
	golden(t, "reasons.kept.json.txt", js.String())
}

// TestFalseTagAdviceIsFollowed: app's images carry no version label. A
// hand edit calls the lock entry 1.30.0 while its digest is 1.22.6's (the
// registry's 1.30.0 names another digest); h1 runs 1.25.0. pin refuses
// (the tag is a claim it checks), and its advice writes no tag next to a
// digest it does not believe names it. The refusal is golden (text and
// JSON). Then each piece of advice, as the JSON gives it, is written into
// the catalogue: pin accepts each, and no lock it writes carries the
// claim.
func TestFalseTagAdviceIsFollowed(t *testing.T) {
	w := newWorld(t)
	const app = "registry.example.org/team/app"
	old, mid, newer := w.build("app 1.22.6", "", "2024-12-12T00:00:00Z"), w.build("app 1.25.0", "", "2025-06-01T00:00:00Z"), w.build("app 1.30.0", "", "2026-09-01T00:00:00Z")
	w.tag(app, "1.22.6", old)
	w.tag(app, "1.25.0", mid)
	w.tag(app, "1.30.0", newer)
	w.run("h1", "app", app, app+":1.25.0", mid)
	modules := fmt.Sprintf(`module "app" {
  image  = %q
  policy = "at-least-running"
  runs_on "h1" { container = "app" }
}
`, app)
	w.write([]string{"registry.example.org"}, modules)
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("setup: exit %d\n%s", r.code, r.stderr)
	}
	lockFile := filepath.Join(w.dir, "pin.lock.hcl")
	editFile(t, lockFile, func(s string) string {
		b := block(s, "app")
		e := strings.NewReplacer(mid.digest, old.digest, mid.config, old.config, `"1.25.0"`, `"1.30.0"`,
			"2025-06-01T00:00:00Z", "2024-12-12T00:00:00Z").Replace(b)
		// (what h1 ran stays recorded as it was)
		e = strings.Replace(e, "observed \"h1\" {\n    container = \"app\"\n    tag       = \"1.30.0\"\n    digest    = \""+old.digest, "observed \"h1\" {\n    container = \"app\"\n    tag       = \"1.25.0\"\n    digest    = \""+mid.digest, 1)
		return strings.Replace(s, b, e, 1)
	})
	edited := string(mustRead(t, lockFile))
	claim := "1.30.0@" + old.digest

	text := pin(t, w.dir, "resolve")
	js := pin(t, w.dir, "resolve", "--format", "json")
	golden(t, "reasons.false-tag.txt", text.stdout+text.stderr)
	golden(t, "reasons.false-tag.json", js.stdout)
	validate(t, compileSchemas(t)["plan.schema.json"], "the refusal", js.stdout)
	if text.code != exitFindings || string(mustRead(t, lockFile)) != edited {
		t.Fatalf("resolve over the false tag: exit %d, want %d and the lock as it was\n%s", text.code, exitFindings, text.stderr)
	}
	if i := strings.Index(text.stderr, "to decide"); i < 0 || strings.Contains(text.stderr[i:], claim) {
		t.Errorf("the advice writes the claim %s back:\n%s", claim, text.stderr)
	}
	var p planOutput
	if err := json.Unmarshal([]byte(js.stdout), &p); err != nil || len(p.Modules) != 1 || p.Modules[0].Refusal == nil || len(p.Modules[0].Refusal.Advice) == 0 {
		t.Fatalf("no advice in the JSON: %v\n%s", err, js.stdout)
	}
	for _, a := range p.Modules[0].Refusal.Advice {
		var set []string
		for _, st := range a.Set {
			v := st.Value
			if strings.HasPrefix(v, "<") {
				v = "the words of " + st.Attr
			}
			set = append(set, fmt.Sprintf("  %s = %q", st.Attr, v))
		}
		t.Run(a.Goal, func(t *testing.T) {
			cat := strings.Replace(strings.Replace(modules, "  policy = \"at-least-running\"\n", "", 1), "  image  = ", strings.Join(set, "\n")+"\n  image  = ", 1)
			if !strings.Contains(cat, "policy") {
				cat = strings.Replace(cat, "  image  = ", "  policy = \"at-least-running\"\n  image  = ", 1)
			}
			w.write([]string{"registry.example.org"}, cat)
			writeFile(t, lockFile, edited)
			r := pin(t, w.dir, "resolve")
			if r.code != exitOK {
				t.Fatalf("with\n%s\nexit %d\n%s%s", cat, r.code, r.stdout, r.stderr)
			}
			if l := readLock(t, w.dir); strings.Contains(block(l, "app"), `tag     = "1.30.0"`) && lockedDigest(t, l, "app") == old.digest {
				t.Errorf("the lock carries the claim:\n%s", l)
			}
		})
	}
}

// TestMovedTrackUpstreamCopy: a track-upstream module's image moves to a
// repository that has only an older release; the lock keeps the previous
// entry, in its old repository, and says to copy the image across with
// crane copy. The copy, made as it says (go-containerregistry's crane,
// against the real registry), lets the new repository's newest tag lock
// the same digest from there.
func TestMovedTrackUpstreamCopy(t *testing.T) {
	reg := testenv.Registry(t)
	id := time.Now().UnixNano()
	oldRepo, newRepo := fmt.Sprintf("%s/old/app-%d", reg, id), fmt.Sprintf("%s/new/app-%d", reg, id)
	locked := testimage.PushRelease(t, oldRepo, "1.0.0", "2026-09-01", testimage.Options{Content: "1.0.0"})
	testimage.PushRelease(t, newRepo, "0.9.0", "2026-06-01", testimage.Options{Content: "0.9.0"})
	dir := t.TempDir()
	cat := func(repo string) {
		writeFile(t, filepath.Join(dir, "catalogue.hcl"), fmt.Sprintf("module \"app\" {\n  image  = %q\n  policy = \"track-upstream\"\n}\n", repo))
	}
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	cat(oldRepo)
	if r := pin(t, dir, "resolve", cache); r.code != exitOK {
		t.Fatalf("setup: exit %d\n%s", r.code, r.stderr)
	}
	cat(newRepo)
	r := pin(t, dir, "resolve", cache)
	copyCmd := regexp.MustCompile(`\(crane copy (\S+) (\S+)\)`).FindStringSubmatch(r.stdout)
	if r.code != exitOK || copyCmd == nil || !strings.Contains(r.stdout, "won      the previous lock") || lockedDigest(t, readLock(t, dir), "app") != locked.DigestStr() {
		t.Fatalf("the image moved: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if copyCmd[1] != oldRepo+"@"+locked.DigestStr() || copyCmd[2] != newRepo+":1.0.0" {
		t.Errorf("crane copy %s %s, want %s@%s %s:1.0.0", copyCmd[1], copyCmd[2], oldRepo, locked.DigestStr(), newRepo)
	}
	if err := crane.Copy(copyCmd[1], copyCmd[2], crane.Insecure); err != nil {
		t.Fatal(err)
	}
	r = pin(t, dir, "resolve", cache)
	lock := readLock(t, dir)
	if r.code != exitOK || !strings.Contains(block(lock, "app"), `image   = "`+newRepo+`"`) || lockedDigest(t, lock, "app") != locked.DigestStr() {
		t.Errorf("after the copy: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, lock)
	}
}
