package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

var fleetModule = regexp.MustCompile(`(?ms)^(?:#[^\n]*\n)*module "([^"]+)" \{\n.*?^\}\n\n?`)

// fleetDir writes the outdated fleet (testdata/outdated.*) into a temporary
// folder: the catalogue, with only the modules named in keep when any,
// mesh-2's snapshot and the hand-written lock.
func fleetDir(t *testing.T, keep ...string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "outdated.fleet.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	cat := strings.ReplaceAll(string(src), `"examples/`, `"`+repoRoot+`/examples/`)
	if len(keep) > 0 {
		cat = fleetModule.ReplaceAllStringFunc(cat, func(block string) string {
			if slices.Contains(keep, fleetModule.FindStringSubmatch(block)[1]) {
				return block
			}
			return ""
		})
	}
	files := map[string]string{"catalogue.hcl": cat}
	for name, from := range map[string]string{"mesh-2.json": "outdated.mesh-2.json", "pin.lock.hcl": "outdated.fleet.lock.hcl"} {
		b, err := os.ReadFile(filepath.Join("testdata", from))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestOutdatedFleet: golden table, JSON and GitHub annotations of a fleet
// with every status at least once; exit 1 on the default --fail-on, naming
// the failing modules; the lock untouched.
func TestOutdatedFleet(t *testing.T) {
	dir := fleetDir(t)
	lockBefore, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	for _, tc := range []struct{ format, golden string }{
		{"table", "outdated.fleet.txt"},
		{"json", "outdated.fleet.json"},
		{"github", "outdated.fleet.github.txt"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			r := pin(t, dir, "outdated", "--format", tc.format)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			golden(t, tc.golden, r.stdout)
			want := `pin: module "analytics-canary" (unknown-order), "forge" (behind-running), "forge-nightly" (error) and "packages" (skew): a status in --fail-on (behind-running,regression,digest-gone,unknown-order,skew,unverified,error)`
			if strings.TrimSpace(r.stderr) != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, want)
			}
		})
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(after, lockBefore) {
		t.Error("outdated changed the lock")
	}

	// Each status occurs, on the module the fleet's comments say.
	r := pin(t, dir, "outdated", "--format", "json")
	var out outdatedOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range out.Modules {
		got[m.Name] = strings.Join(m.Statuses, ",")
	}
	want := map[string]string{
		"analytics":        "current",
		"analytics-canary": "unknown-order",
		"forge":            "behind-running,behind-upstream",
		"forge-lts":        "behind-upstream",
		"forge-nightly":    "error",
		"packages":         "skew",
		"packages-next":    "unlocked",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || out.Schema != 1 || !out.Failed {
		t.Errorf("statuses = %v (schema %d, failed %v)\nwant %v", got, out.Schema, out.Failed, want)
	}
}

// TestOutdatedFailOn: the exit code for each --fail-on choice, on fleets
// that have every status, only behind-upstream, or nothing to report.
func TestOutdatedFailOn(t *testing.T) {
	full := fleetDir(t)
	lts := fleetDir(t, "forge-lts")
	clean := incidentDir(t, nil)
	if r := pin(t, clean, "resolve"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, tc := range []struct {
		fleet  string
		failOn string // "-": the default
		code   int
	}{
		{"full", "-", 1},
		{"full", "none", 0},
		{"full", "any", 1},
		{"full", "behind-running", 1},
		{"full", "unknown-order", 1},
		{"full", "skew", 1},
		{"full", "error", 1},
		{"full", "unlocked", 1},
		{"full", "behind-upstream", 1},
		{"full", " skew , error ", 1},
		{"lts", "-", 0},
		{"lts", "none", 0},
		{"lts", "any", 1},
		{"lts", "behind-upstream", 1},
		{"lts", "behind-running,unknown-order,skew,error,unlocked", 0},
		{"clean", "-", 0},
		{"clean", "any", 0},
		{"clean", "none", 0},
		{"full", "bogus", 2},
		{"full", "", 2},
		{"full", "skew,", 2},
		{"full", "any,skew", 2},
		{"full", "none,error", 2},
		{"full", "current", 2},
	} {
		t.Run(tc.fleet+"/"+tc.failOn, func(t *testing.T) {
			dir := map[string]string{"full": full, "lts": lts, "clean": clean}[tc.fleet]
			args := []string{"outdated"}
			if tc.failOn != "-" {
				args = append(args, "--fail-on", tc.failOn)
			}
			r := pin(t, dir, args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if tc.code == 2 && (r.stdout != "" || !strings.Contains(r.stderr, "--fail-on")) {
				t.Errorf("bad --fail-on: stdout %q, stderr %q", r.stdout, r.stderr)
			}
		})
	}
	if r := pin(t, full, "outdated", "--format", "yaml"); r.code != 2 || !strings.Contains(r.stderr, "table, json or github") {
		t.Errorf("--format yaml: exit %d %s", r.code, r.stderr)
	}
	// The global --format still refuses github for other commands.
	if r := pin(t, clean, "resolve", "--format", "github"); r.code != 2 {
		t.Errorf("resolve --format github: exit %d", r.code)
	}
}

// TestOutdatedUnreachable: a host or registry that cannot be read at all
// gives exit 3, whatever --fail-on says, after the report, which says why
// on the module.
func TestOutdatedUnreachable(t *testing.T) {
	for _, tc := range []struct{ name, edit, want string }{
		{"host", `snapshot = "mesh-2.json"`, "host mesh-2: "},
		{"registry", `mirror = "` + repoRoot + `/examples/incident/registry"`, "registry of registry.example.org/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fleetDir(t, "forge-lts")
			cat := filepath.Join(dir, "catalogue.hcl")
			src, _ := os.ReadFile(cat)
			s := strings.Replace(string(src), tc.edit, strings.Replace(tc.edit, `"`, `"`+dir+`/gone-`, 1), 1)
			if s == string(src) {
				t.Fatal("edit did not apply")
			}
			os.WriteFile(cat, []byte(s), 0o644)
			r := pin(t, dir, "outdated", "--fail-on", "none", "--format", "json")
			if r.code != 3 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "gone-") {
				t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
			}
			var out outdatedOutput
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Modules) != 1 {
				t.Fatalf("no report: %v\n%s", err, r.stdout)
			}
			if m := out.Modules[0]; !slices.Contains(m.Statuses, "error") || !strings.Contains(m.Error, tc.want) {
				t.Errorf("module: statuses %v, error %q", m.Statuses, m.Error)
			}
		})
	}
}

// TestOutdatedOffline: with --offline, a live host is not asked (an error
// on its modules, not exit 3), no registry without a mirror is asked (no
// upstream column, and no error), and snapshots and the lock still report.
func TestOutdatedOffline(t *testing.T) {
	dir := incidentDir(t, nil)
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	cat := filepath.Join(dir, "catalogue.hcl")
	src, _ := os.ReadFile(cat)
	s := regexp.MustCompile(`(?s)registry "registry.example.org" \{.*?\}\n`).ReplaceAllString(string(src), "")
	s += `
host "mesh-9" {
  docker = "tcp://192.0.2.1:2376"
}

module "mail" {
  image  = "registry.example.org/mail/server"
  policy = "at-least-running"
  runs_on "mesh-9" { container = "mail" }
}
`
	os.WriteFile(cat, []byte(s), 0o644)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	r := pin(t, dir, "outdated", "--offline", "--format", "json", cache)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	var out outdatedOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Modules {
		want := "current"
		if m.Name == "mail" {
			want = "error,unlocked"
			if !strings.Contains(m.Error, "host mesh-9") || !strings.Contains(m.Error, "--offline") {
				t.Errorf("mail: error %q", m.Error)
			}
		}
		if got := strings.Join(m.Statuses, ","); got != want || m.Upstream != nil {
			t.Errorf("%s: statuses %s, upstream %+v; want %s and none", m.Name, got, m.Upstream, want)
		}
	}
	if r := pin(t, dir, "outdated", "--offline", "--fail-on", "behind-running", cache); r.code != 0 {
		t.Errorf("--offline --fail-on behind-running: exit %d\n%s", r.code, r.stderr)
	}
}

// TestOutdatedHostileNames: a container name carrying a terminal escape
// and a newline that would start another workflow command is escaped in
// the table and in the annotations.
func TestOutdatedHostileNames(t *testing.T) {
	dir := fleetDir(t, "packages")
	evil := "pkg\x1b[2J\n::error::pwned"
	snap, _ := os.ReadFile(filepath.Join(dir, "mesh-2.json"))
	esc, _ := json.Marshal(evil)
	os.WriteFile(filepath.Join(dir, "mesh-2.json"), bytes.Replace(snap, []byte(`"name": "packages"`), []byte(`"name": `+string(esc)), 1), 0o644)
	cat := filepath.Join(dir, "catalogue.hcl")
	src, _ := os.ReadFile(cat)
	os.WriteFile(cat, []byte(strings.Replace(string(src), `runs_on "mesh-2" { container = "packages" }`, `runs_on "mesh-2" { container = "pkg\u001b[2J\n::error::pwned" }`, 1)), 0o644)

	r := pin(t, dir, "outdated")
	if r.code != 1 || strings.ContainsRune(r.stdout, 0x1b) || !strings.Contains(r.stdout, `mesh-2/pkg\x1b[2J`) {
		t.Fatalf("table: exit %d\n%q", r.code, r.stdout)
	}
	r = pin(t, dir, "outdated", "--format", "github")
	if strings.ContainsRune(r.stdout, 0x1b) {
		t.Errorf("annotations carry a raw escape: %q", r.stdout)
	}
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		if strings.Contains(l, "pwned") && !strings.HasPrefix(l, "::error ") {
			t.Errorf("a hostile name started its own line: %q", l)
		}
	}
	if !strings.Contains(r.stdout, `pkg\x1b[2J%0A::error::pwned`) {
		t.Errorf("the newline is not escaped as GitHub wants:\n%s", r.stdout)
	}
}

// TestOutdatedProgress: the progress line counts hosts and modules,
// redraws in place and is erased at the end; off, it prints nothing.
func TestOutdatedProgress(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, "outdated", true, 0)
	p.loaded(&catalogue.Catalogue{Hosts: make([]*catalogue.Host, 2), Modules: make([]*catalogue.Module, 3)})
	p.hostDone(1, 2)
	p.hostDone(2, 2)
	p.moduleDone(1, 3)
	p.clear()
	want := "\r\x1b[Kpin outdated: hosts 1/2, modules 0/3\r\x1b[Kpin outdated: hosts 2/2, modules 0/3\r\x1b[Kpin outdated: hosts 2/2, modules 1/3\r\x1b[K"
	if b.String() != want {
		t.Errorf("progress = %q\nwant       %q", b.String(), want)
	}
	b.Reset()
	off := newProgress(&b, "outdated", false, 0)
	off.hostDone(1, 2)
	off.moduleDone(1, 3)
	off.clear()
	if b.Len() != 0 {
		t.Errorf("progress off printed %q", b.String())
	}
	// In-process runs write to buffers, never terminals: stderr stays clean.
	if r := pin(t, fleetDir(t, "forge-lts"), "outdated"); r.stderr != "" {
		t.Errorf("stderr of a run that is not on a terminal: %q", r.stderr)
	}
}

func TestAnnotationEscapes(t *testing.T) {
	if got := escapeData("100% done\r\nnext"); got != "100%25 done%0D%0Anext" {
		t.Errorf("escapeData = %q", got)
	}
	if got := escapeProperty("a:b,c%\n"); got != "a%3Ab%2Cc%25%0A" {
		t.Errorf("escapeProperty = %q", got)
	}
}

// TestOutdatedColor: colour only when asked (a terminal and no NO_COLOR):
// statuses in --fail-on red, other findings yellow, current green; the
// columns stay aligned. A pipe is not a terminal.
func TestOutdatedColor(t *testing.T) {
	dir := fleetDir(t)
	r := pin(t, dir, "outdated", "--format", "json")
	var out outdatedOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	failOn, _ := parseFailOn(defaultFailOn)
	var plain, colored strings.Builder
	writeOutdatedTable(&plain, out, failOn, false)
	writeOutdatedTable(&colored, out, failOn, true)
	for _, want := range []string{colorRed + "behind-running" + colorReset + ", " + colorYellow + "behind-upstream" + colorReset, colorGreen + "current" + colorReset, colorRed + "skew" + colorReset} {
		if !strings.Contains(colored.String(), want) {
			t.Errorf("coloured table lacks %q:\n%s", want, colored.String())
		}
	}
	strip := regexp.MustCompile("\x1b\\[[0-9]*m").ReplaceAllString(colored.String(), "")
	if strip != plain.String() {
		t.Errorf("colour changed the layout:\n%s\n---\n%s", strip, plain.String())
	}
	// A character device is taken for a terminal; NO_COLOR turns colour off.
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	t.Setenv("NO_COLOR", "")
	if !useColor(null) {
		t.Error("no colour on a character device")
	}
	t.Setenv("NO_COLOR", "1")
	if useColor(null) {
		t.Error("colour with NO_COLOR set")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if isTerminal(pw) || isTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer taken for a terminal")
	}
}

// TestOutdatedEndToEnd runs against the real registry and Docker Engine: a
// floating tag moves and the host recreates its container on the newer
// build, so the lock is behind what runs (exit 1); "pin lock --from-host"
// records it, and then the module is current (exit 0).
func TestOutdatedEndToEnd(t *testing.T) {
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/e2e/outdated-%d", reg, id)
	container := fmt.Sprintf("outdated-%d", id)
	sleeper := testimage.Sleeper(t)
	build := func(v, date string) string {
		created, _ := time.Parse("2006-01-02", date)
		img := testimage.Build(t, testimage.Options{Layer: sleeper, Entrypoint: []string{testimage.SleeperPath}, Created: created,
			Labels: map[string]string{"org.opencontainers.image.version": v}})
		return testimage.Push(t, repo+":"+v, img).DigestStr()
	}
	oldDigest := build("1.22.6", "2024-12-12")
	newDigest := build("1.27.3", "2026-09-01")
	tagStable := func(digest string) {
		t.Helper()
		dockerCLI(t, dh, "pull", "-q", repo+"@"+digest)
		dockerCLI(t, dh, "tag", repo+"@"+digest, repo+":stable")
		dockerCLI(t, dh, "push", "-q", repo+":stable")
	}
	tagStable(oldDigest)
	dockerCLI(t, dh, "run", "-d", "--network", "none", "--name", container, repo+":stable")
	t.Cleanup(func() { exec.Command("docker", "-H", dh, "rm", "-f", container).Run() })

	dir := t.TempDir()
	cat := fmt.Sprintf(`host "mesh-1" {
  docker = %q
}

module "forge" {
  image  = %q
  policy = "at-least-running"
  pin    = "1.22.6@%s"
  runs_on "mesh-1" { container = %q }
}
`, dh, repo, oldDigest, container)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	statuses := func(r result) string {
		t.Helper()
		var out outdatedOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Modules) != 1 {
			t.Fatalf("json: %v\n%s%s", err, r.stdout, r.stderr)
		}
		return strings.Join(out.Modules[0].Statuses, ",")
	}

	// The lock names the pin, which runs; upstream has 1.27.3.
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	r := pin(t, dir, "outdated", "--format", "json", cache)
	if got := statuses(r); r.code != 0 || got != "behind-upstream" {
		t.Fatalf("before the move: exit %d, statuses %s\n%s", r.code, got, r.stderr)
	}

	// The tag moves on; the host recreates the container on the newer build.
	tagStable(newDigest)
	dockerCLI(t, dh, "rm", "-f", container)
	dockerCLI(t, dh, "run", "-d", "--network", "none", "--name", container, repo+":stable")
	r = pin(t, dir, "outdated", "--format", "json", cache)
	if got := statuses(r); r.code != 1 || !strings.Contains(got, "behind-running") {
		t.Fatalf("after the move: exit %d, statuses %s\n%s", r.code, got, r.stderr)
	}
	r = pin(t, dir, "outdated", "--format", "github", cache)
	if r.code != 1 || !strings.Contains(r.stdout, "::error file=catalogue.hcl,line=5,title=forge%3A behind-running::mesh-1/"+container+" runs 1.27.3, newer than the locked 1.22.6") {
		t.Fatalf("github: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Keep what runs, and record it: current (or behind-upstream), exit 0.
	if r := pin(t, dir, "lock", "--from-host", "mesh-1", cache); r.code != 0 {
		t.Fatalf("lock --from-host: exit %d\n%s", r.code, r.stderr)
	}
	r = pin(t, dir, "outdated", "--format", "json", cache)
	if got := statuses(r); r.code != 0 || (got != "current" && got != "behind-upstream") {
		t.Fatalf("after lock --from-host: exit %d, statuses %s\n%s%s", r.code, got, r.stdout, r.stderr)
	}
	r = pin(t, dir, "outdated", cache)
	if r.code != 0 || !strings.Contains(r.stdout, "(same)") || !strings.Contains(r.stdout, "Nothing in --fail-on") {
		t.Fatalf("table after lock --from-host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
