package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install at a tag", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/pin-tool/pin", Version: "v0.3.0"}},
			"pin v0.3.0, built with go1.26.8"},
		{"a checkout with VCS stamping", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/pin-tool/pin", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "d34efb305674747d5fb16a7e2b5a8a09597f7723"},
				{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"pin (devel) revision d34efb305674747d5fb16a7e2b5a8a09597f7723 (2026-12-01T10:00:00Z, modified), built with go1.26.8"},
		{"a clean checkout", debug.BuildInfo{Main: debug.Module{Path: "github.com/pin-tool/pin"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}},
			"pin (devel) revision abc"},
		{"go run, or -buildvcs=false", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/pin-tool/pin", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}}},
			"pin (devel), built with go1.26.8; no revision: built without VCS information (by go run, with -buildvcs=false, or outside a git clone; " +
				"a git worktree does not count): go build -buildvcs=true ./cmd/pin in a git clone records it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionOf(&tc.bi).String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// "pin --version" and "pin version" print the same line, read from this
// binary's build information, without a catalogue.
func TestVersionCommands(t *testing.T) {
	dir := t.TempDir() // no catalogue here: version must not need one
	flag := pin(t, dir, "--version")
	cmd := pin(t, dir, "version")
	if flag.code != 0 || cmd.code != 0 {
		t.Fatalf("exit %d and %d; stderr %q %q", flag.code, cmd.code, flag.stderr, cmd.stderr)
	}
	want := readBuildVersion().String() + "\n"
	if flag.stdout != want || cmd.stdout != want {
		t.Errorf("--version %q, version %q, want %q", flag.stdout, cmd.stdout, want)
	}
	bi, _ := debug.ReadBuildInfo()
	if !strings.HasPrefix(want, "pin ") || !strings.Contains(want, bi.GoVersion) {
		t.Errorf("version line %q does not name pin and %s", want, bi.GoVersion)
	}
}

// TestVersionAdviceRecordsRevision runs what a devel build without a
// revision advises, in a git clone of this checkout's commit, with
// GOFLAGS=-buildvcs=false in the environment as a user may have it: the
// binary then names the commit.
func TestVersionAdviceRecordsRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pin")
	}
	advice := regexp.MustCompile(`: (go build [^ ]+ \./cmd/pin) in a git clone`).FindStringSubmatch(noRevision)
	if advice == nil {
		t.Fatalf("no go build command in %q", noRevision)
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			if os.Getenv("CI") == "" {
				t.Skipf("git %s: %v (not a git checkout?)", strings.Join(args, " "), err)
			}
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	head := git(repoRoot, "rev-parse", "HEAD")
	clone := filepath.Join(t.TempDir(), "pin")
	git(repoRoot, "clone", "-q", "--no-checkout", repoRoot, clone)
	git(clone, "checkout", "-q", head)
	args := strings.Fields(advice[1])
	bin := filepath.Join(t.TempDir(), "pin")
	cmd := exec.Command(args[0], append(append([]string{}, args[1:len(args)-1]...), "-o", bin, args[len(args)-1])...)
	cmd.Dir = clone
	// CGO_ENABLED=0 and -trimpath as well: the configuration the suite
	// compiles pin's dependencies in (scripts/test, like_release), which
	// says nothing of a version either.
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false -trimpath", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), " revision "+head) || strings.Contains(string(out), "no revision") {
		t.Errorf("after %s in a clone of %s: %s", advice[1], head, out)
	}
}

// TestVersionJSON: pin version --format json is the build information
// as an object matching version.schema.json, with the same version and
// revision as the line; another format is refused.
func TestVersionJSON(t *testing.T) {
	dir := t.TempDir()
	r := pin(t, dir, "version", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	validate(t, compileSchemas(t)["version.schema.json"], "version --format json", r.stdout)
	var got versionOutput
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	v := readBuildVersion()
	if got.Command != "version" || got.Version != v.Version || got.Revision != v.Revision || got.Module != v.Module || got.Go != v.Go {
		t.Errorf("version JSON %+v, build %+v", got, v)
	}
	if r := pin(t, dir, "version", "--format", "yaml"); r.code != exitInput || !strings.Contains(r.stderr, `--format "yaml": write table or json`) {
		t.Errorf("--format yaml: exit %d %s", r.code, r.stderr)
	}
}
