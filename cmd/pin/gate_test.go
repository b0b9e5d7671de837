package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestPlanGateMissingContainer: pin plan HOST, the deployment gate, when
// forge's container (runs_on "mesh-1" { container = "forgejo" }) is not
// on mesh-1: recreated as forgejo-2 (a container no module takes over
// runs forge's repository), or gone while the lock recorded it there. It
// names what it expected, where the catalogue says so, and what to do,
// and exits 1: a gate that cannot see what it guards does not pass. Where
// nothing of the module ran (a first start) it says NEW and passes; with
// no lock entry, UNLOCKED. The outputs are golden (text and JSON, which
// matches its schema). Then each suggestion is followed: writing the
// container's new name in runs_on, and renaming it back.
func TestPlanGateMissingContainer(t *testing.T) {
	dir, _ := incidentMirror(t)
	if r := pin(t, dir, "resolve"); r.code != exitOK {
		t.Fatalf("setup: %s", r.stderr)
	}
	snap := filepath.Join(dir, "mesh-1.json")
	original := string(mustRead(t, snap))
	schema := compileSchemas(t)["cutover.schema.json"]
	var text, js strings.Builder
	plan := func(what string, want int) string {
		t.Helper()
		r := pin(t, dir, "plan", "mesh-1")
		fmt.Fprintf(&text, "# %s\n$ pin plan mesh-1\nexit %d\n%s%s\n", what, r.code, r.stdout, r.stderr)
		j := pin(t, dir, "plan", "mesh-1", "--format", "json")
		fmt.Fprintf(&js, "# %s\n%s\n", what, j.stdout)
		validate(t, schema, what, j.stdout)
		if r.code != want || j.code != want {
			t.Errorf("%s: exit %d (json %d), want %d\n%s%s", what, r.code, j.code, want, r.stdout, r.stderr)
		}
		return r.stdout
	}
	withoutForgejo := func(s string) string {
		var snapshot map[string]any
		if err := json.Unmarshal([]byte(s), &snapshot); err != nil {
			t.Fatal(err)
		}
		var kept []any
		for _, c := range snapshot["containers"].([]any) {
			if c.(map[string]any)["name"] != "forgejo" {
				kept = append(kept, c)
			}
		}
		snapshot["containers"] = kept
		b, _ := json.MarshalIndent(snapshot, "", " ")
		return string(b)
	}

	renamed := strings.Replace(original, `"name": "forgejo"`, `"name": "forgejo-2"`, 1)
	writeFile(t, snap, renamed)
	out := plan("forgejo recreated as forgejo-2", exitFindings)
	for _, want := range []string{
		"mesh-1/forgejo (module forge): MISSING",
		`module "forge" takes over the container forgejo on mesh-1 (runs_on "mesh-1", catalogue.hcl:23:11), and mesh-1 has no container of that name`,
		"rename forgejo-2 back (docker rename forgejo-2 forgejo)",
		`write container = "forgejo-2" in runs_on "mesh-1" of module "forge" (catalogue.hcl:23:11)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	writeFile(t, snap, withoutForgejo(original))
	plan("forgejo gone, recorded in the lock", exitFindings)

	// A first start: nothing of forge ran on mesh-1 as far as the lock
	// knows (an entry without observations), nothing runs there.
	lockFile := filepath.Join(dir, "pin.lock.hcl")
	locked := string(mustRead(t, lockFile))
	editFile(t, lockFile, func(s string) string {
		b := block(s, "forge")
		return strings.Replace(s, b, regexp.MustCompile(`(?s)\n  observed "mesh-1" \{.*?\n  \}\n`).ReplaceAllString(b, "\n"), 1)
	})
	plan("forgejo not there yet, nothing recorded", exitOK)
	editFile(t, lockFile, func(s string) string { return strings.Replace(s, block(s, "forge"), "", 1) })
	plan("forgejo not there yet, nothing locked", exitFindings)
	golden(t, "gate.missing.txt", text.String())
	golden(t, "gate.missing.json.txt", js.String())

	// What it says to do, each in turn.
	writeFile(t, lockFile, locked)
	writeFile(t, snap, withoutForgejo(original))
	cat := string(mustRead(t, filepath.Join(dir, "catalogue.hcl")))
	if !strings.Contains(text.String(), "if the module no longer runs on mesh-1, remove that runs_on") {
		t.Fatalf("no runs_on to remove in:\n%s", text.String())
	}
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `  runs_on "mesh-1" { container = "forgejo" }`+"\n", "", 1)
	})
	if r := pin(t, dir, "plan", "mesh-1"); r.code != exitOK || strings.Contains(r.stdout, "forgejo") {
		t.Errorf("runs_on removed as it says: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)
	writeFile(t, snap, renamed)
	write := regexp.MustCompile(`write (container = "[^"]+") in runs_on`).FindStringSubmatch(out)
	if write == nil {
		t.Fatalf("nothing to write in:\n%s", out)
	}
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `runs_on "mesh-1" { container = "forgejo" }`, `runs_on "mesh-1" { `+write[1]+` }`, 1)
	})
	if r := pin(t, dir, "plan", "mesh-1"); r.code != exitOK || !strings.Contains(r.stdout, "mesh-1/forgejo-2 (module forge): SAME") {
		t.Errorf("runs_on as it says: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)
	rename := regexp.MustCompile(`docker rename (\S+) (\S+)\)`).FindStringSubmatch(out)
	writeFile(t, snap, strings.Replace(renamed, `"name": "`+rename[1]+`"`, `"name": "`+rename[2]+`"`, 1))
	if r := pin(t, dir, "plan", "mesh-1"); r.code != exitOK {
		t.Errorf("renamed back: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPlanGateMissingContainerOnDocker: the same on a real Docker Engine:
// the container a module takes over is recreated under another name; pin
// plan refuses, and the docker rename it prints, run as printed, makes
// the gate pass.
func TestPlanGateMissingContainerOnDocker(t *testing.T) {
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/gate/app-%d", reg, id)
	name := fmt.Sprintf("gate-%d", id)
	img := testimage.Build(t, testimage.Options{Layer: testimage.Sleeper(t), Entrypoint: []string{testimage.SleeperPath},
		Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), Labels: map[string]string{"org.opencontainers.image.version": "1.0.0"}})
	testimage.Push(t, repo+":1.0.0", img)
	dockerCLI(t, dh, "pull", "-q", repo+":1.0.0")
	dockerCLI(t, dh, "run", "-d", "--network", "none", "--name", name, repo+":1.0.0")
	t.Cleanup(func() {
		exec.Command("docker", "-H", dh, "rm", "-f", name).Run()
		exec.Command("docker", "-H", dh, "rm", "-f", name+"-new").Run()
	})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), fmt.Sprintf(`host "h1" {
  docker = %q
}

module "app" {
  image  = %q
  policy = "at-least-running"
  runs_on "h1" { container = %q }
}
`, dh, repo, name))
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	if r := pin(t, dir, "resolve", cache); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	dockerCLI(t, dh, "rename", name, name+"-new")
	r := pin(t, dir, "plan", "h1", cache)
	rename := regexp.MustCompile(`\(docker (rename \S+ \S+)\)`).FindStringSubmatch(r.stdout)
	if r.code != exitFindings || !strings.Contains(r.stdout, "h1/"+name+" (module app): MISSING") || rename == nil {
		t.Fatalf("plan with the container renamed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dockerCLI(t, dh, strings.Fields(rename[1])...)
	if r := pin(t, dir, "plan", "h1", cache); r.code != exitOK || !strings.Contains(r.stdout, "h1/"+name+" (module app): SAME") {
		t.Errorf("after docker %s: exit %d\n%s%s", rename[1], r.code, r.stdout, r.stderr)
	}
}
