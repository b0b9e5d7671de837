package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// These tests are the numbered cases of the fail-closed issue, each on the
// repository's own incident (offline: the layout mirror and a snapshot of
// mesh-1). Each failed on the main branch before floors, the monotone lock
// and the content checks; the real-server versions are in
// failclosed_e2e_test.go.

// incidentLocked resolves the incident once (forge 1.27.3, packages
// 6.10.3, analytics 2026-09-17 locked) and gives its folder, with the
// snapshot copied in so that a test may edit it.
func incidentLocked(t *testing.T) string {
	t.Helper()
	dir := incidentDir(t, func(s string) string {
		return strings.Replace(s, repoRoot+`/examples/incident/mesh-1.json`, "mesh-1.json", 1)
	})
	snap, err := os.ReadFile(filepath.Join(repoRoot, "examples/incident/mesh-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "mesh-1.json"), string(snap))
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	return dir
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, edit(string(b)))
}

func readLock(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lockedDigest is the digest line of module name in a lock.
func lockedDigest(t *testing.T, lock, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)module "` + name + `" \{.*?\n  digest +=\s*"(sha256:[0-9a-f]+)"`).FindStringSubmatch(lock)
	if m == nil {
		t.Fatalf("no module %q in the lock:\n%s", name, lock)
	}
	return m[1]
}

const (
	forge1273 = "sha256:fe63af8ae93decbf99e452febf938935c4a9782c1cf78c9f43311b3afdc7b6e3"
	forge1226 = "sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665"
)

// Case 1: the containers stop (maintenance, a reboot). What they ran is
// still a floor: the lock keeps 1.27.3, outdated and plan agree.
func TestStoppedContainersStayFloors(t *testing.T) {
	dir := incidentLocked(t)
	before := readLock(t, dir)
	editFile(t, filepath.Join(dir, "mesh-1.json"), func(s string) string {
		return strings.ReplaceAll(s, `"state": "running"`, `"state": "exited"`)
	})
	r := pin(t, dir, "resolve")
	if r.code != 0 || lockedDigest(t, readLock(t, dir), "forge") != forge1273 {
		t.Fatalf("resolve with stopped containers: exit %d, forge %s\n%s%s", r.code, lockedDigest(t, readLock(t, dir), "forge"), r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "update") && lockedDigest(t, before, "packages") != lockedDigest(t, readLock(t, dir), "packages") {
		t.Errorf("packages moved:\n%s", r.stdout)
	}
	// With the old pins in the lock, outdated fails and plan says DOWNGRADE
	// for the stopped containers.
	editFile(t, filepath.Join(dir, "pin.lock.hcl"), func(s string) string { return s })
	r = pin(t, dir, "plan", "mesh-1")
	if r.code != 0 || strings.Count(r.stdout, "SAME") != 3 {
		t.Errorf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// exact on the old pin is refused against the stopped container.
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy  = "at-least-running"`, `policy  = "exact"`, 1)
	})
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	r = pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, `module "forge": refusing a downgrade: the exact pin is older than what mesh-1/forgejo runs`) {
		t.Errorf("exact over a stopped 1.27.3: exit %d\n%s", r.code, r.stderr)
	}
}

// Case 2: the module's runs_on, its host, or the container goes away. The
// previous lock entry is a floor: nothing moves back to the pin.
func TestVanishedFloorsKeepTheLock(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(dir string)
	}{
		{"runs_on removed", func(dir string) {
			editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
				return strings.Replace(s, `  runs_on "mesh-1" { container = "forgejo" }`, "", 1)
			})
		}},
		{"container removed", func(dir string) {
			editFile(t, filepath.Join(dir, "mesh-1.json"), func(s string) string {
				return strings.Replace(s, `"name": "forgejo"`, `"name": "forgejo-gone"`, 1)
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := incidentLocked(t)
			tc.edit(dir)
			r := pin(t, dir, "resolve")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			lock := readLock(t, dir)
			if got := lockedDigest(t, lock, "forge"); got != forge1273 {
				t.Fatalf("forge went back to %s:\n%s", got, r.stdout)
			}
			if !strings.Contains(lock, "the previous lock names 1.27.3") {
				t.Errorf("the lock does not say why it kept 1.27.3:\n%s", lock)
			}
			// A second run changes nothing.
			if r := pin(t, dir, "resolve", "--check"); r.code != 0 {
				t.Errorf("--check after keeping: exit %d\n%s", r.code, r.stdout)
			}
		})
	}
}

// Case 2, exact: a pin edited down is refused against the previous lock,
// and outdated reports it as a regression.
func TestPinEditedDownIsARegression(t *testing.T) {
	dir := incidentLocked(t)
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		s = strings.Replace(s, `  runs_on "mesh-1" { container = "forgejo" }`, "", 1)
		return strings.Replace(s, `policy  = "at-least-running"`, `policy  = "exact"`, 1)
	})
	before := readLock(t, dir)
	r := pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, "the exact pin is older than what the previous lock names") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if readLock(t, dir) != before {
		t.Error("a refused run changed the lock")
	}
	r = pin(t, dir, "outdated")
	if r.code != 1 || !strings.Contains(r.stdout, "forge: regression: pin resolve would refuse") {
		t.Errorf("outdated: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Case 4: a pin whose tag says 1.30.0 over the digest of the 1.22.6 image
// (its label says 1.22.6) is an error at the pin's line, never an upgrade.
func TestLyingPinTag(t *testing.T) {
	dir := incidentDir(t, func(s string) string {
		return strings.Replace(s, `pin     = "1.22.6@`, `pin     = "1.30.0@`, 1)
	})
	for _, policy := range []string{"at-least-running", "exact"} {
		editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
			return regexp.MustCompile(`policy  = "[a-z-]+"`).ReplaceAllString(s, `policy  = "`+policy+`"`)
		})
		r := pin(t, dir, "resolve")
		if r.code != 2 || !strings.Contains(r.stderr, `catalogue.hcl:21`) || !strings.Contains(r.stderr, `the pin "1.30.0@sha256:e8cb`) || !strings.Contains(r.stderr, "labelled version 1.22.6") {
			t.Errorf("%s: exit %d\n%s", policy, r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); err == nil {
			t.Errorf("%s: a lock was written", policy)
		}
	}
}

// Case 5: a hand edit (or a bad merge) puts the older image's digest under
// lines that describe the newer one. resolve, plan and outdated read the
// digest's content and refuse the entry (exit 2), naming its line.
func TestHandEditedLock(t *testing.T) {
	dir := incidentLocked(t)
	editFile(t, filepath.Join(dir, "pin.lock.hcl"), func(s string) string {
		return strings.Replace(s, `digest  = "`+forge1273+`"`, `digest  = "`+forge1226+`"`, 1)
	})
	edited := readLock(t, dir)
	if !strings.Contains(edited, forge1226) {
		t.Fatal("the edit did not take")
	}
	for _, args := range [][]string{{"resolve"}, {"plan", "mesh-1"}, {"outdated"}} {
		r := pin(t, dir, args...)
		if r.code != 2 || !regexp.MustCompile(`pin\.lock\.hcl:\d+: the lock's entry for module "forge" says (version|config|created) = `).MatchString(r.stderr) {
			t.Errorf("%s: exit %d\n%s%s", args[0], r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "SAME") {
			t.Errorf("%s: a hand-edited entry was judged the same:\n%s", args[0], r.stdout)
		}
	}
	if readLock(t, dir) != edited {
		t.Error("a failed run rewrote the lock")
	}
}

// Case 3, offline: lock --from-host on a host that runs nothing older of
// the module keeps what the lock recorded of the other host.
func TestFromHostKeepsOtherHosts(t *testing.T) {
	dir := incidentLocked(t)
	// mesh-2 runs forge 1.22.6 (the old build); mesh-1 runs 1.27.3.
	writeFile(t, filepath.Join(dir, "mesh-2.json"), `{"schema": 1, "host": "mesh-2", "image_store": "classic",
  "containers": [{"id": "2", "name": "forgejo", "image": "registry.example.org/forge/forgejo:1.22.6",
    "image_id": "sha256:0a70ad70cc3b01ed11e4051b88ef0e042a9b02fb59881176872106ac46890262", "state": "running"}],
  "images": [{"id": "sha256:0a70ad70cc3b01ed11e4051b88ef0e042a9b02fb59881176872106ac46890262",
    "repo_digests": ["registry.example.org/forge/forgejo@`+forge1226+`"], "created": "2024-12-12T00:00:00Z",
    "labels": {"org.opencontainers.image.version": "1.22.6"}, "os": "linux", "architecture": "amd64"}]}`)
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		s = strings.Replace(s, `  runs_on "mesh-1" { container = "forgejo" }`, `  runs_on "mesh-1" { container = "forgejo" }
  runs_on "mesh-2" { container = "forgejo" }`, 1)
		return s + "\nhost \"mesh-2\" {\n  snapshot = \"mesh-2.json\"\n}\n"
	})
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	r := pin(t, dir, "lock", "--from-host", "mesh-2")
	lock := readLock(t, dir)
	if r.code != 0 || lockedDigest(t, lock, "forge") != forge1273 {
		t.Fatalf("lock --from-host mesh-2: exit %d, forge %s\n%s%s", r.code, lockedDigest(t, lock, "forge"), r.stdout, r.stderr)
	}
	if !strings.Contains(lock, `observed "mesh-1"`) {
		t.Errorf("mesh-1's observation was dropped:\n%s", lock)
	}
}

// A malformed snapshot is bad input: exit 2, naming the file and where,
// for resolve, plan and outdated alike.
func TestMalformedSnapshotIsBadInput(t *testing.T) {
	dir := incidentLocked(t)
	writeFile(t, filepath.Join(dir, "mesh-1.json"), "{\"schema\": 1,\n \"host\": \"mesh-1\",\n \"containers\": [oops]}\n")
	before := readLock(t, dir)
	for _, args := range [][]string{{"resolve"}, {"plan", "mesh-1"}, {"outdated"}} {
		r := pin(t, dir, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "mesh-1.json:3:") {
			t.Errorf("%s: exit %d\n%s", args[0], r.code, r.stderr)
		}
	}
	if readLock(t, dir) != before {
		t.Error("the lock changed")
	}
}

// A lock entry whose digest the registry (here the mirror) does not serve,
// with lines newer than what runs: its lines hold the floor up, but resolve
// will not keep what it cannot read, and plan calls the cutover unknown,
// not an upgrade. The lock stays byte-identical.
func TestUnservedLockEntry(t *testing.T) {
	dir := incidentLocked(t)
	gone := "sha256:" + strings.Repeat("d", 64)
	editFile(t, filepath.Join(dir, "pin.lock.hcl"), func(s string) string {
		s = strings.Replace(s, `  tag     = "1.27.3"
  tags    = ["1.27.3"]
  digest  = "`+forge1273+`"`, `  tag     = "1.28.0"
  tags    = ["1.28.0"]
  digest  = "`+gone+`"`, 1)
		return strings.Replace(s, `  version = "1.27.3"`, `  version = "1.28.0"`, 1)
	})
	edited := readLock(t, dir)
	if !strings.Contains(edited, gone) {
		t.Fatal("the edit did not take")
	}
	// (The pin is refused first: older than what runs.)
	r := pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, "refus") {
		t.Errorf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `pin     = "1.22.6@`+forge1226+`"`, `pin     = "1.27.3@`+forge1273+`"`, 1)
	})
	r = pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, "does not serve that digest") {
		t.Errorf("resolve with the pin at what runs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, dir, "plan", "mesh-1")
	if r.code == 0 || strings.Contains(r.stdout, "UPGRADE") || !strings.Contains(r.stdout+r.stderr, "does not serve the locked digest") {
		t.Errorf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if readLock(t, dir) != edited {
		t.Error("a refused run rewrote the lock")
	}
}

// A host added to a module's runs_on after the lock was written: lock
// --from-host on the old host cannot know its floor, and refuses.
func TestFromHostRefusesAJoinedHost(t *testing.T) {
	dir := incidentLocked(t)
	writeFile(t, filepath.Join(dir, "mesh-2.json"), `{"schema": 1, "host": "mesh-2", "image_store": "classic", "containers": [], "images": []}`)
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		s = strings.Replace(s, `  runs_on "mesh-1" { container = "forgejo" }`, `  runs_on "mesh-1" { container = "forgejo" }
  runs_on "mesh-2" { container = "forgejo" }`, 1)
		return s + "\nhost \"mesh-2\" {\n  snapshot = \"mesh-2.json\"\n}\n"
	})
	before := readLock(t, dir)
	r := pin(t, dir, "lock", "--from-host", "mesh-1")
	if r.code != 1 || !strings.Contains(r.stderr, "mesh-2") || !strings.Contains(r.stderr, "host added to runs_on or to the catalogue since") {
		t.Errorf("lock --from-host mesh-1 with mesh-2 never read: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if readLock(t, dir) != before {
		t.Error("a refused run rewrote the lock")
	}
	// pin resolve reads mesh-2 (it runs nothing), and records it.
	if r := pin(t, dir, "resolve"); r.code != 0 || !strings.Contains(readLock(t, dir), `hosts  = ["mesh-1", "mesh-2"]`) {
		t.Fatalf("resolve: exit %d\n%s\n%s", r.code, r.stderr, readLock(t, dir))
	}
	if r := pin(t, dir, "lock", "--from-host", "mesh-1"); r.code != 0 {
		t.Errorf("lock --from-host mesh-1 once mesh-2 is recorded: exit %d\n%s", r.code, r.stderr)
	}
}
