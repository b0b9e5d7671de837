package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/lock"
)

// observeDir is a folder whose catalogue reads host h1 from a snapshot
// (h1.snapshot.json), with a cosign key for pin observe.
func observeDir(t *testing.T) (dir, key string) {
	t.Helper()
	dir = t.TempDir()
	key, _ = fleetKey(t, dir)
	snap := host.Snapshot{Schema: 1, Host: "h1", ImageStore: "classic"}
	b, err := snap.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "h1.snapshot.json"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte("host \"h1\" {\n  snapshot = \"h1.snapshot.json\"\n}\n"), 0o644)
	return dir, key
}

// files is every file under dir, by its path in dir, with its content
// (a link as "-> target").
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&os.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			out[rel] = "-> " + l
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			t.Errorf("%s: %s changed", what, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s was created", what, p)
		}
	}
}

// TestObserveWritesOnlyItsOwn: pin observe --output over a file pin
// observe did not write (the catalogue it reads, the lock, a JSON file of
// the user's, the default HOST.json being the user's) is refused, exit 2,
// saying what to pass; no file changes, no signature is created. An
// observation it wrote is replaced; --force replaces the others.
func TestObserveWritesOnlyItsOwn(t *testing.T) {
	dir, key := observeDir(t)
	os.WriteFile(filepath.Join(dir, "pin.lock.hcl"), lock.Format(&lock.Lock{Hosts: []string{"h1"}}), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.json"), []byte("{\"mine\": true}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "h1.json"), []byte("{\"hosts\": [\"h1\"]}\n"), 0o644)
	var b strings.Builder
	for _, out := range []string{"catalogue.hcl", "pin.lock.hcl", "notes.json", ""} {
		args := []string{"observe", "h1", "--key", key}
		if out != "" {
			args = append(args, "--output", out)
		}
		before := files(t, dir)
		r := pin(t, dir, args...)
		fmt.Fprintf(&b, "$ pin %s\nexit %d\n%s%s\n", strings.Join(append([]string{"observe h1 --key k.key"}, args[4:]...), " "), r.code, r.stdout, strings.ReplaceAll(r.stderr, dir, "DIR"))
		if r.code != exitInput {
			t.Errorf("pin %s: exit %d, want %d\n%s%s", strings.Join(args, " "), r.code, exitInput, r.stdout, r.stderr)
		}
		sameFiles(t, "pin "+strings.Join(args, " "), before, files(t, dir))
	}
	golden(t, "writes.observe-not-pins.txt", b.String())

	// Forced, then written again over its own.
	for _, args := range [][]string{{"--output", "notes.json", "--force"}, {"--output", "notes.json"}} {
		r := pin(t, dir, append([]string{"observe", "h1", "--key", key}, args...)...)
		if r.code != 0 {
			t.Fatalf("pin observe %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.json")); !strings.Contains(string(b), `"pin_observation"`) {
		t.Errorf("notes.json holds %s", b)
	}
}

// TestObserveFailedRunKeepsPair: an observation whose file is a link to
// a file that was moved away is refused (exit 2), and its signature file
// is as it was: a new signature beside the old body would be refused by
// every reader.
func TestObserveFailedRunKeepsPair(t *testing.T) {
	dir, key := observeDir(t)
	os.MkdirAll(filepath.Join(dir, "obs"), 0o755)
	os.Symlink(filepath.Join(dir, "moved", "h1.json"), filepath.Join(dir, "obs", "h1.json"))
	os.WriteFile(filepath.Join(dir, "obs", "h1.json.sig"), []byte(base64.StdEncoding.EncodeToString([]byte("an old signature"))+"\n"), 0o644)
	before := files(t, dir)
	r := pin(t, dir, "observe", "h1", "--key", key, "--output", "obs/h1.json")
	if r.code != exitInput || !strings.Contains(r.stderr, "a symbolic link to a file that does not exist") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sameFiles(t, "a failed observe", before, files(t, dir))
}

// TestProposeBodyFileOnlyItsOwn: pin propose --body-file naming a file
// that holds no proposal (the README, the catalogue) is refused before
// anything is proposed, exit 2, saying what to pass, the file as it was.
func TestProposeBodyFileOnlyItsOwn(t *testing.T) {
	dir := incidentDir(t, nil)
	os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("# Our notes\n"), 0o644)
	before := files(t, dir)
	r := pin(t, dir, "propose", "--body-file", "NOTES.md")
	golden(t, "writes.propose-body-file.txt", fmt.Sprintf("exit %d\n%s%s", r.code, r.stdout, r.stderr))
	if r.code != exitInput {
		t.Errorf("exit %d, want %d", r.code, exitInput)
	}
	sameFiles(t, "pin propose --body-file NOTES.md", before, files(t, dir))
}
