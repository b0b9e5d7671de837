package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pin-tool/pin/lock"
)

// linkTo makes link a symbolic link to target, or skips where the
// platform does not let this user make one (Windows without Developer
// Mode).
func linkTo(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("symbolic links need Developer Mode here: %v", err)
		}
		t.Fatal(err)
	}
}

// isLinkTo checks that path is still a symbolic link, to target, and that
// target is a file with mode perm (where the platform keeps modes) holding
// want.
func isLinkTo(t *testing.T, path, target string, perm fs.FileMode, want func(string) bool) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link (%v)", path, err)
	}
	b, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if !want(string(b)) {
		t.Errorf("%s, the link's target, holds:\n%s", target, b)
	}
	fi, _ = os.Stat(target)
	if runtime.GOOS != "windows" && fi.Mode().Perm() != perm {
		t.Errorf("%s has mode %v, want %v", target, fi.Mode().Perm(), perm)
	}
}

// TestResolveThroughALinkedLock: pin.lock.hcl a link to a 0600 lock in
// another folder (a shared checkout): resolve writes the lock there, the
// link stays, the mode too.
func TestResolveThroughALinkedLock(t *testing.T) {
	dir := incidentDir(t, nil)
	target := filepath.Join(dir, "shared", "team.lock.hcl")
	os.Mkdir(filepath.Dir(target), 0o755)
	if err := os.WriteFile(target, nil, 0o600); err != nil { // an empty lock
		t.Fatal(err)
	}
	linkTo(t, filepath.Join("shared", "team.lock.hcl"), filepath.Join(dir, "pin.lock.hcl"))
	r := pin(t, dir, "resolve")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	golden, _ := os.ReadFile(filepath.Join("testdata", "incident.lock.hcl"))
	isLinkTo(t, filepath.Join(dir, "pin.lock.hcl"), target, 0o600, func(s string) bool { return s == string(golden) })
	if r := pin(t, dir, "resolve", "--check"); r.code != 0 {
		t.Errorf("--check through the link: exit %d\n%s", r.code, r.stderr)
	}
}

// TestResolveRefusesADanglingLock: a pin.lock.hcl linking to nothing (the
// shared folder not mounted) is not an empty lock to start again from: the
// run stops, and neither the link nor anything else is written.
func TestResolveRefusesADanglingLock(t *testing.T) {
	dir := incidentDir(t, nil)
	os.Mkdir(filepath.Join(dir, "mnt"), 0o755)
	linkTo(t, filepath.Join("mnt", "pin.lock.hcl"), filepath.Join(dir, "pin.lock.hcl"))
	r := pin(t, dir, "resolve")
	if r.code != exitInput || !strings.Contains(r.stderr, "Lockfile link names no file") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "mnt", "pin.lock.hcl")); err == nil {
		t.Error("the link's target was created")
	}
	if fi, err := os.Lstat(filepath.Join(dir, "pin.lock.hcl")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
}

// TestInitThroughALinkedCatalogue: catalogue.hcl a link to a 0640 file
// elsewhere: init appends there, and the link stays.
func TestInitThroughALinkedCatalogue(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"compose.yaml":   "services:\n  web:\n    image: reg.example/web:1.2\n",
		"conf/pin/c.hcl": "# the team's catalogue\n",
	})
	target := filepath.Join(dir, "conf", "pin", "c.hcl")
	os.Chmod(target, 0o640)
	linkTo(t, filepath.Join("conf", "pin", "c.hcl"), filepath.Join(dir, "catalogue.hcl"))
	if r := pin(t, dir, "init", "--compose", "compose.yaml"); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	isLinkTo(t, filepath.Join(dir, "catalogue.hcl"), target, 0o640, func(s string) bool {
		return strings.HasPrefix(s, "# the team's catalogue\n") && strings.Contains(s, `module "web"`)
	})
}

// exportFixture is a catalogue of two modules, web and db, with a lock
// naming them, under dir.
func exportFixture(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	files["catalogue.hcl"] = `module "web" {
  image  = "registry.example.org/pin/web"
  policy = "exact"
  pin    = "1.2"
}
module "db" {
  image  = "registry.example.org/pin/db"
  policy = "exact"
  pin    = "2.0"
}
`
	writeFiles(t, dir, files)
	lk := &lock.Lock{Modules: []*lock.Module{
		{Name: "web", Policy: "exact", Image: "registry.example.org/pin/web", Tag: "1.2", Digest: digWeb, Source: "pin", Reason: "test"},
		{Name: "db", Policy: "exact", Image: "registry.example.org/pin/db", Tag: "2.0", Digest: digForge, Source: "pin", Reason: "test"},
	}}
	if err := os.WriteFile(filepath.Join(dir, "pin.lock.hcl"), lock.Format(lk), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	webLocked = "registry.example.org/pin/web:1.2@" + digWeb
	dbLocked  = "registry.example.org/pin/db:2.0@" + digForge
)

// TestExportThroughLinks: a Compose file and an env file that are links
// (the env file to a 0600 file of secrets) stay links; their targets get
// the lock and keep their modes.
func TestExportThroughLinks(t *testing.T) {
	dir := t.TempDir()
	exportFixture(t, dir, map[string]string{
		"deploy/compose.yaml": "services:\n  web:\n    image: registry.example.org/pin/web:1.2\n  db:\n    image: registry.example.org/pin/db:2.0\n",
		"secrets/deploy.env":  "DB_PASSWORD=hunter2\nWEB_IMAGE=registry.example.org/pin/web:1.1\n",
	})
	os.Chmod(filepath.Join(dir, "secrets", "deploy.env"), 0o600)
	os.Chmod(filepath.Join(dir, "deploy", "compose.yaml"), 0o640)
	linkTo(t, filepath.Join("deploy", "compose.yaml"), filepath.Join(dir, "compose.yaml"))
	linkTo(t, filepath.Join(dir, "secrets", "deploy.env"), filepath.Join(dir, "deploy.env"))
	if r := pin(t, dir, "export", "--compose", "compose.yaml", "--in-place", "--env", "deploy.env", "--offline"); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	isLinkTo(t, filepath.Join(dir, "compose.yaml"), filepath.Join(dir, "deploy", "compose.yaml"), 0o640, func(s string) bool {
		return s == "services:\n  web:\n    image: "+webLocked+"\n  db:\n    image: "+dbLocked+"\n"
	})
	isLinkTo(t, filepath.Join(dir, "deploy.env"), filepath.Join(dir, "secrets", "deploy.env"), 0o600, func(s string) bool {
		return s == "DB_PASSWORD=hunter2\nWEB_IMAGE="+webLocked+"\nDB_IMAGE="+dbLocked+"\n"
	})
	if r := pin(t, dir, "export", "--compose", "compose.yaml", "--in-place", "--env", "deploy.env", "--offline", "--check"); r.code != 0 {
		t.Errorf("--check after export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestExportNeverClobbersAHandWrittenOverride: a compose.pin.yaml that a
// person wrote (no pin header) is not replaced: exit 2, naming --force,
// the file as it was; --check says it too. With --force it is replaced,
// and from then on it is pin's.
func TestExportNeverClobbersAHandWrittenOverride(t *testing.T) {
	dir := t.TempDir()
	mine := "# my own overrides\nservices:\n  web:\n    environment: [DEBUG=1]\n"
	exportFixture(t, dir, map[string]string{
		"compose.yaml":     "services:\n  web:\n    image: registry.example.org/pin/web:1.2\n",
		"compose.pin.yaml": mine,
	})
	r := pin(t, dir, "export", "--compose", "compose.yaml", "--offline")
	if r.code != exitInput || !strings.Contains(r.stderr, "compose.pin.yaml: not written by pin: it lacks the header pin writes, so a person wrote it; pass --force to replace it") ||
		!strings.Contains(r.stderr, "nothing written") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "compose.pin.yaml")); string(b) != mine {
		t.Fatalf("the hand-written override was changed:\n%s", b)
	}
	r = pin(t, dir, "export", "--compose", "compose.yaml", "--offline", "--check")
	if r.code != exitFindings || !strings.Contains(r.stderr, "pass --force") {
		t.Errorf("--check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The JSON names the file refused, with and without --check.
	for _, args := range [][]string{{"--check"}, nil} {
		r = pin(t, dir, append([]string{"export", "--compose", "compose.yaml", "--offline", "--format", "json"}, args...)...)
		validate(t, compileSchemas(t)["export.schema.json"], "export --format json, not pin's override", r.stdout)
		if !strings.Contains(r.stdout, `"kind": "file"`) || !strings.Contains(r.stdout, `"where": "compose.pin.yaml"`) || !strings.Contains(r.stdout, "pass --force") {
			t.Errorf("export --format json %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := pin(t, dir, "export", "--compose", "compose.yaml", "--offline", "--force"); r.code != 0 {
		t.Fatalf("--force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "compose.pin.yaml"))
	if !strings.HasPrefix(string(b), "# Written by pin export") || !strings.Contains(string(b), webLocked) {
		t.Fatalf("after --force:\n%s", b)
	}
	// pin's own override is rewritten without --force.
	os.WriteFile(filepath.Join(dir, "compose.pin.yaml"), []byte(strings.Replace(string(b), digWeb, digForge, 1)), 0o644)
	if r := pin(t, dir, "export", "--compose", "compose.yaml", "--offline"); r.code != 0 {
		t.Fatalf("over pin's own override: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestExportEnvEveryAssignment: a name assigned twice in an env file gets
// the lock in both places (the last is what shells and Compose read);
// --check fails while the last one is stale, even when the first agrees.
func TestExportEnvEveryAssignment(t *testing.T) {
	dir := t.TempDir()
	stale := "WEB_IMAGE=" + webLocked + "\nDB_IMAGE=" + dbLocked + "\n# later override\nexport WEB_IMAGE=registry.example.org/pin/web:1.1\n"
	exportFixture(t, dir, map[string]string{"deploy.env": stale})
	r := pin(t, dir, "export", "--env", "deploy.env", "--offline", "--check")
	if r.code != exitFindings || strings.Contains(r.stdout, "Every file agrees") {
		t.Fatalf("--check with a stale last assignment: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "export", "--env", "deploy.env", "--offline"); r.code != 0 || !strings.Contains(r.stdout, "deploy.env, WEB_IMAGE: registry.example.org/pin/web:1.1 → "+webLocked) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "deploy.env"))
	if want := strings.Replace(stale, "web:1.1", "web:1.2@"+digWeb, 1); string(b) != want {
		t.Fatalf("env file:\n%s\nwant:\n%s", b, want)
	}
	if r := pin(t, dir, "export", "--env", "deploy.env", "--offline", "--check"); r.code != 0 {
		t.Errorf("--check after export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestExportSaysWhatItCannotWrite: images written as a YAML alias or a
// block scalar are named, with how to write them, and neither a write nor
// --check passes while they name another image than the lock; an alias
// of an anchor export rewrites to the same image is written with it.
func TestExportSaysWhatItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	src := "x-web: &web registry.example.org/pin/web:1.1\nservices:\n  web:\n    image: *web\n  db:\n    image: >-\n      registry.example.org/pin/db:1.9\n"
	exportFixture(t, dir, map[string]string{"compose.yaml": src})
	for _, args := range [][]string{{"--check"}, {}} {
		r := pin(t, dir, append([]string{"export", "--compose", "compose.yaml", "--in-place", "--offline"}, args...)...)
		verb := "cannot write"
		if len(args) > 0 {
			verb = "cannot check"
		}
		for _, want := range []string{
			verb + " compose.yaml:4, service web: the image is written as the YAML alias *web, which pin does not rewrite, and it names registry.example.org/pin/web:1.1, not the locked " + webLocked + "; write it as a plain value on its image: line, or give the anchor &web the value " + webLocked,
			verb + " compose.yaml:6, service db: the image is written as a YAML block scalar (>-)",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q", args, want)
			}
		}
		if r.code != exitFindings || strings.Contains(r.stdout, "Every file agrees") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "compose.yaml")); string(b) != src {
		t.Errorf("the file changed:\n%s", b)
	}
	// The anchor on web's own image line: rewritten, and the alias with it.
	os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services:\n  web:\n    image: &web registry.example.org/pin/web:1.1\n  web2:\n    image: *web\n"), 0o644)
	if r := pin(t, dir, "export", "--compose", "compose.yaml", "--in-place", "--offline"); r.code != 0 {
		t.Fatalf("anchor and alias: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "export", "--compose", "compose.yaml", "--in-place", "--offline", "--check"); r.code != 0 {
		t.Errorf("--check after: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestExportMergedImageIsNotSkippedSilently: a service whose image comes
// from a merge key has no image: line to rewrite in place: said, exit 1;
// the override writes it.
func TestExportMergedImageIsNotSkippedSilently(t *testing.T) {
	dir := t.TempDir()
	exportFixture(t, dir, map[string]string{
		"compose.yaml": "x-base: &base\n  image: registry.example.org/pin/web:1.1\nservices:\n  web:\n    <<: *base\n",
	})
	r := pin(t, dir, "export", "--compose", "compose.yaml", "--in-place", "--offline", "--check")
	if r.code != exitFindings || !strings.Contains(r.stderr, "cannot check service web: its image is not written on an image: line of these files") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "export", "--compose", "compose.yaml", "--offline"); r.code != 0 {
		t.Fatalf("the override: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestManifestEndingWithACommentDocument: a manifest file whose last
// document holds only comments is read as kubectl reads it, by init and
// by export.
func TestManifestEndingWithACommentDocument(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k8s/forge.yaml": manifests + "---\n# generated; do not edit above\n",
	})
	if r := pin(t, dir, "init", "--manifests", "k8s"); r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "export", "--manifests", "k8s", "--in-place", "--offline", "--check"); r.code == exitInput {
		t.Fatalf("export --check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
