package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/pin-tool/pin/internal/testkit/faultproxy"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/lock"
)

// The tests of this file run pin under faults and check, for each, the
// message, the exit code and that the lockfile is byte-identical: a clean
// run writes the lock, a new version is pushed so that the lock would
// change, the fault is injected and pin runs again.

// faultRepo is a repository with version 1.0 on the real registry, read by
// a track-upstream module through a fault proxy, in dir; a clean run has
// written its lock.
type faultRepo struct {
	dir  string // holds catalogue.hcl, pin.lock.hcl and the cache
	reg  string // the real registry
	path string // the repository path, on both
	px   *faultproxy.Proxy
	lock []byte // the lock the clean run wrote
}

func newFaultRepo(t *testing.T) *faultRepo {
	t.Helper()
	reg := testenv.Registry(t)
	f := &faultRepo{dir: t.TempDir(), reg: reg, path: fmt.Sprintf("fault/cli-%d", time.Now().UnixNano())}
	f.push(t, "1.0")
	f.px = faultproxy.New(t, reg)
	cat := fmt.Sprintf(`module "app" {
  image  = "%s/%s"
  policy = "track-upstream"
}
`, f.px.Host, f.path)
	if err := os.WriteFile(filepath.Join(f.dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := f.pin(t, "resolve"); r.code != 0 || !strings.Contains(f.read(t), `tag     = "1.0"`) {
		t.Fatalf("clean run: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, f.read(t))
	}
	f.lock = []byte(f.read(t))
	return f
}

func (f *faultRepo) push(t *testing.T, version string) {
	t.Helper()
	testimage.Push(t, f.reg+"/"+f.path+":"+version, testimage.Build(t, testimage.Options{
		Content: version, Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
		Labels: map[string]string{"org.opencontainers.image.version": version},
	}))
}

func (f *faultRepo) pin(t *testing.T, args ...string) result {
	t.Helper()
	return pin(t, f.dir, append(args, "--cache-dir="+filepath.Join(f.dir, "cache"))...)
}

func (f *faultRepo) read(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "pin.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unchanged fails the test unless the lock is byte-identical to the one
// the clean run wrote.
func (f *faultRepo) unchanged(t *testing.T) {
	t.Helper()
	if got := f.read(t); got != string(f.lock) {
		t.Errorf("the lock changed under the fault:\n%s", got)
	}
	if _, diags := lock.Parse([]byte(f.read(t)), "pin.lock.hcl"); diags.HasErrors() {
		t.Errorf("the lock does not parse: %v", diags)
	}
}

// cacheIntact fails the test if the cache holds a blob that is not what
// its name says: content refused must never be cached.
func (f *faultRepo) cacheIntact(t *testing.T) {
	t.Helper()
	dir := filepath.Join(f.dir, "cache", "blobs", "sha256")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != e.Name() {
			t.Errorf("cache holds %s, whose content does not match", e.Name())
		}
	}
}

// TestRegistryFaults: each fault of docs/faults.md's table that a registry can
// show, through the proxy in front of the real registry.
func TestRegistryFaults(t *testing.T) {
	manifest11 := faultproxy.Manifest(http.MethodGet, "1.1")
	blobGET := faultproxy.Blob(http.MethodGet)
	for _, tc := range []struct {
		name   string
		inject func(f *faultRepo)
		// code 0: pin recovers, and the lock names 1.1.
		code int
		want []string
		// took is the least the run must take (a Retry-After waited out).
		took time.Duration
	}{
		{"429 with Retry-After", func(f *faultRepo) {
			f.px.Inject(manifest11, 1, faultproxy.Status(http.StatusTooManyRequests, "Retry-After", "2"))
		}, 0, nil, 2 * time.Second},
		{"5xx burst within the bound", func(f *faultRepo) {
			f.px.Inject(manifest11, 2, faultproxy.Status(http.StatusBadGateway))
		}, 0, nil, 0},
		{"5xx past the bound", func(f *faultRepo) {
			f.px.Inject(faultproxy.TagList, 0, faultproxy.Status(http.StatusServiceUnavailable))
		}, 3, []string{`module "app"`, "listing tags of", "fault injected: 503 (HTTP 503 Service Unavailable)"}, 0},
		{"connection reset once", func(f *faultRepo) {
			f.px.Inject(manifest11, 1, faultproxy.Reset())
		}, 0, nil, 0},
		{"connection resets", func(f *faultRepo) {
			f.px.Inject(manifest11, 0, faultproxy.Reset())
		}, 3, []string{"manifest of " + "%HOST%/%PATH%:1.1", "connection reset by peer"}, 0},
		{"truncated body", func(f *faultRepo) {
			f.px.Inject(blobGET, 0, faultproxy.Truncate(10))
		}, 3, []string{"config of %HOST%/%PATH%@sha256:", "unexpected EOF"}, 0},
		{"manifest not matching its digest", func(f *faultRepo) {
			f.px.Inject(manifest11, 0, faultproxy.Corrupt())
		}, 3, []string{"manifest %HOST%/%PATH%:1.1: the registry says it is sha256:", "content does not match its digest"}, 0},
		{"config not matching its digest", func(f *faultRepo) {
			f.px.Inject(blobGET, 0, faultproxy.Corrupt())
		}, 3, []string{"config of %HOST%/%PATH%@sha256:", "content does not match its digest"}, 0},
		{"oversized manifest", func(f *faultRepo) {
			f.px.Inject(manifest11, 0, faultproxy.Oversize(64<<20, true))
		}, 3, []string{"manifest %HOST%/%PATH%:1.1 is 64 MiB, more than the 4 MiB pin reads: too large"}, 0},
		{"oversized manifest, no length", func(f *faultRepo) {
			f.px.Inject(manifest11, 0, faultproxy.Oversize(64<<20, false))
		}, 3, []string{"manifest %HOST%/%PATH%:1.1 is more than the 4 MiB pin reads: too large"}, 0},
		{"oversized config", func(f *faultRepo) {
			f.px.Inject(blobGET, 0, faultproxy.Oversize(64<<20, false))
		}, 3, []string{"is more than the 4 MiB pin reads: too large"}, 0},
		{"Link that loops", func(f *faultRepo) {
			f.px.Inject(faultproxy.TagList, 0, faultproxy.Headers(func(r *http.Request, h http.Header) {
				h.Set("Link", fmt.Sprintf(`<%s?n=1000&last=1.0>; rel="next"`, r.URL.Path))
			}))
		}, 3, []string{"listing tags of %HOST%/%PATH%: the Link header loops back to", "refused"}, 0},
		{"Link to another host", func(f *faultRepo) {
			f.px.Inject(faultproxy.TagList, 0, faultproxy.Headers(func(r *http.Request, h http.Header) {
				h.Set("Link", fmt.Sprintf(`<http://203.0.113.9:5000%s?n=1000&last=1.0>; rel="next"`, r.URL.Path))
			}))
		}, 3, []string{"the Link header of %HOST% points to http://203.0.113.9:5000/v2/", "another host: not followed"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultRepo(t)
			f.push(t, "1.1") // the lock would change
			tc.inject(f)
			start := time.Now()
			r := f.pin(t, "resolve")
			took := time.Since(start)
			t.Logf("exit %d in %v\n%s", r.code, took.Round(time.Millisecond), r.stderr)
			if f.px.Faulted() == 0 {
				t.Fatal("no request met the fault: the test checked nothing")
			}
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if took < tc.took {
				t.Errorf("took %v, want at least %v", took, tc.took)
			}
			f.cacheIntact(t)
			if tc.code == 0 {
				if !strings.Contains(f.read(t), `tag     = "1.1"`) {
					t.Errorf("pin recovered but did not lock 1.1:\n%s", f.read(t))
				}
				return
			}
			for _, w := range tc.want {
				w = strings.NewReplacer("%HOST%", f.px.Host, "%PATH%", f.path).Replace(w)
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			if !strings.Contains(r.stderr, "pin.lock.hcl left unchanged") || !strings.Contains(r.stdout, "pin.lock.hcl not written.") {
				t.Errorf("pin does not say the lock was left unchanged:\n%s%s", r.stdout, r.stderr)
			}
			f.unchanged(t)
			// Without the fault the same run locks 1.1: the lock was kept
			// because of the fault, not because nothing had changed.
			f.px.Clear()
			if r := f.pin(t, "resolve"); r.code != 0 || !strings.Contains(f.read(t), `tag     = "1.1"`) {
				t.Errorf("after the fault: exit %d\n%s\n%s", r.code, r.stderr, f.read(t))
			}
		})
	}
}

// stderrClean is true when s has no raw control character but newline and
// tab, and no raw C1 control.
func stderrClean(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// hostileVersion is a version label that tries to move the cursor, clear
// the screen, set the terminal title, reverse the text and flood the line.
var hostileVersion = "1.0.0\x1b[2J\x1b]0;pwned\x07\u009b31m\u202e" + strings.Repeat("v", 400)

// noRawControls fails the test if text holds a control character other
// than newline and tab, raw.
func noRawControls(t *testing.T, what, text string) {
	t.Helper()
	if !stderrClean(text) {
		i := strings.IndexFunc(text, func(r rune) bool {
			return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0)
		})
		t.Errorf("%s prints a raw control character at %d: %q", what, i, text[max(0, i-40):min(len(text), i+40)])
	}
}

// TestHostileNames: a version label (read from the real registry and from
// the real Docker Engine), a container name (from a snapshot file: the
// engine refuses such names), tags and a registry's error message carry
// terminal escape sequences and absurd lengths. The table, the cutover
// preview and the errors print them escaped and cut; the JSON escapes
// them; the lock holds them escaped.
func TestHostileNames(t *testing.T) {
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/hostile/web-%d", reg, id)
	img := testimage.Build(t, testimage.Options{Layer: testimage.Sleeper(t), Entrypoint: []string{testimage.SleeperPath},
		Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
		Labels:  map[string]string{"org.opencontainers.image.version": hostileVersion}})
	d := testimage.Push(t, repo+":latest", img)
	cfg, _ := img.ConfigName()
	dockerCLI(t, dh, "pull", "-q", repo+":latest")
	ctr := fmt.Sprintf("hostile-%d", id)
	dockerCLI(t, dh, "run", "-d", "--network", "none", "--name", ctr, "--label", "pin.module=web", repo+":latest")
	t.Cleanup(func() { exec.Command("docker", "-H", dh, "rm", "-f", ctr).Run() })

	dir := t.TempDir()
	hostileName := "web\x1b[2J\x1b]0;pwned\x07" + strings.Repeat("n", 400)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	snap := fmt.Sprintf(`{"schema": 1, "host": "file", "image_store": "classic",
  "containers": [{"id": "c1", "name": %s, "image": %s, "image_id": %s, "state": "running", "labels": {"pin.module": "web"}}],
  "images": [{"id": %s, "repo_tags": [%s], "repo_digests": [%s], "created": "2026-09-01T00:00:00Z",
    "labels": {"org.opencontainers.image.version": %s}, "os": "linux", "architecture": %s}]}`,
		q(hostileName), q(repo+":latest"), q(cfg.String()), q(cfg.String()), q(repo+":latest"), q(repo+"@"+d.DigestStr()), q(hostileVersion), q(runtime.GOARCH))
	os.WriteFile(filepath.Join(dir, "file.json"), []byte(snap), 0o644)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(fmt.Sprintf(`host "real" {
  docker = %q
}

host "file" {
  snapshot = "file.json"
}

module "web" {
  image  = %q
  policy = "at-least-running"
  pin    = "latest"
  runs_on "real" {}
  runs_on "file" {}
}
`, dh, repo)), 0o644)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	r := pin(t, dir, "resolve", "-v", cache)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("resolve:\n%s", r.stdout)
	noRawControls(t, "resolve", r.stdout+r.stderr)
	for _, want := range []string{
		`version 1.0.0\x1b[2J\x1b]0;pwned\x07\x9b31m\u202e` + strings.Repeat("v", 256-len(`1.0.0\x1b[2J\x1b]0;pwned\x07\x9b31m\u202e`)) + "…",
		`file/web\x1b[2J\x1b]0;pwned\x07` + strings.Repeat("n", 256-len(`file/web\x1b[2J\x1b]0;pwned\x07`)) + "…",
		"real/" + ctr + " latest@" + d.DigestStr()[:19],
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("resolve does not print %q", want)
		}
	}
	lockSrc, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	noRawControls(t, "the lock", string(lockSrc))
	if !strings.Contains(string(lockSrc), `\u001b[2J`) {
		t.Errorf("the lock does not hold the label escaped:\n%s", lockSrc)
	}
	if _, diags := lock.Parse(lockSrc, "pin.lock.hcl"); diags.HasErrors() {
		t.Errorf("the lock does not parse: %v", diags)
	}

	for _, h := range []string{"real", "file"} {
		r = pin(t, dir, "plan", h, cache)
		if r.code != 0 {
			t.Errorf("plan %s: exit %d\n%s%s", h, r.code, r.stdout, r.stderr)
		}
		noRawControls(t, "plan "+h, r.stdout+r.stderr)
		if !strings.Contains(r.stdout, `\x1b]0;pwned\x07`) || !strings.Contains(r.stdout, "…") {
			t.Errorf("plan %s does not print the label escaped and cut:\n%s", h, r.stdout)
		}
	}

	r = pin(t, dir, "resolve", "--format", "json", cache)
	if r.code != 0 || !json.Valid([]byte(r.stdout)) {
		t.Fatalf("json: exit %d, valid %v\n%s", r.code, json.Valid([]byte(r.stdout)), r.stderr)
	}
	// encoding/json escapes C0 controls (ESC among them), not DEL nor the
	// C1 controls: docs/faults.md says so, and this checks only what holds.
	if strings.ContainsAny(r.stdout, "\x1b\x07") || !strings.Contains(r.stdout, `\u001b[2J`) || !strings.Contains(r.stdout, strings.Repeat("n", 400)) {
		t.Errorf("json does not escape the names, or cuts them:\n%s", r.stdout)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(after, lockSrc) {
		t.Error("the lock changed on a second run")
	}
}

// TestHostileRegistry: tags with escape sequences, and an error message
// that tries to rewrite the terminal and fills a screen, from a registry
// (through the proxy): printed escaped and cut, the lock left as it was.
func TestHostileRegistry(t *testing.T) {
	t.Run("tags", func(t *testing.T) {
		f := newFaultRepo(t)
		f.px.Inject(faultproxy.TagList, 0, faultproxy.Body(func(_ *http.Request, body []byte) []byte {
			var list struct {
				Name string   `json:"name"`
				Tags []string `json:"tags"`
			}
			json.Unmarshal(body, &list)
			list.Tags = append(list.Tags, "1.1\x1b[2J", "\x1b]0;pwned\x07", "9.9.9-"+strings.Repeat("x", 400), "2.0\u202e")
			b, _ := json.Marshal(list)
			return b
		}))
		r := f.pin(t, "resolve", "-v")
		if f.px.Faulted() == 0 {
			t.Fatal("no request met the fault")
		}
		noRawControls(t, "resolve", r.stdout+r.stderr)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		f.unchanged(t)
	})
	t.Run("error message", func(t *testing.T) {
		f := newFaultRepo(t)
		f.push(t, "1.1")
		msg := "\x1b[2J\x1b[Hall good\x1b]0;pwned\x07 " + strings.Repeat("A", 5000) + " " + strings.Repeat("b ", 3000)
		body, _ := json.Marshal(map[string]any{"errors": []map[string]string{{"code": "UNKNOWN", "message": msg}}})
		f.px.Inject(faultproxy.TagList, 0, faultproxy.StatusBody(http.StatusBadRequest, string(body)))
		r := f.pin(t, "resolve")
		if r.code != 3 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		noRawControls(t, "resolve", r.stdout+r.stderr)
		for _, want := range []string{`\x1b[2J\x1b[Hall good\x1b]0;pwned\x07 `, strings.Repeat("A", 256) + "… b b b"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q", want)
			}
		}
		for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
			if n := utf8.RuneCountInString(l); n > len("pin: ")+maxPrintedLine+len("…") {
				t.Errorf("a line of %d characters is printed", n)
			}
		}
		f.unchanged(t)
	})
}

func TestSanitize(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, tc := range []struct{ in, want string }{
		{"plain text\n\tindented", "plain text\n\tindented"},
		{"red \x1b[31mtext\x1b[0m", `red \x1b[31mtext\x1b[0m`},
		{"title \x1b]0;pwned\x07", `title \x1b]0;pwned\x07`},
		{"cr\rbs\bdel\x7f", `cr\x0dbs\x08del\x7f`},
		{"c1 \u009b31m csi", `c1 \x9b31m csi`},
		{"bidi \u202eevil\u202c", `bidi \u202eevil\u202c`},
		{"line\u2028sep", `line\u2028sep`},
		{"née café 日本", "née café 日本"},
		{long, strings.Repeat("a", 256) + "…"},
		{"x " + long + " y", "x " + strings.Repeat("a", 256) + "… y"},
		{strings.Repeat("\x1b", 100), strings.Repeat(`\x1b`, 64) + "…"},
		{strings.Repeat("word ", 1000) + "\nnext", strings.Repeat("word ", 409) + "wor…\nnext"},
	} {
		if got := sanitize(tc.in); got != tc.want {
			t.Errorf("sanitize(%q) =\n  %q\nwant\n  %q", tc.in, got, tc.want)
		}
	}
}

// hostFaultDir writes a catalogue of two live hosts: "real", the real
// Docker Engine, and "broken", at brokenAddr; module "good" runs on the
// first (its container is absent: the pin is locked), "bad" on the second;
// both pin version pinned of an image on the real registry.
func hostFaultDir(t *testing.T, dir, repo, brokenAddr, pinned string) {
	t.Helper()
	cat := fmt.Sprintf(`host "real" {
  docker = %q
}

host "broken" {
  docker = %q
}

module "good" {
  image  = %q
  policy = "at-least-running"
  pin    = %q
  runs_on "real" { container = "pin-absent" }
}

module "bad" {
  image  = %q
  policy = "at-least-running"
  pin    = %q
  runs_on "broken" { container = "web" }
}
`, testenv.DockerHost(t), brokenAddr, repo, pinned, repo, pinned)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostFaults: one of two live hosts is down or answers garbage. pin
// exits 3 naming that host, its address and what failed, still reports
// the module of the other host (its new lock entry), and leaves the lock
// byte-identical; pin plan and pin lock --from-host on it exit 3 too.
func TestHostFaults(t *testing.T) {
	reg := testenv.Registry(t)
	dh := testenv.DockerHost(t)
	repo := fmt.Sprintf("%s/hostfault/app-%d", reg, time.Now().UnixNano())
	for _, v := range []string{"1.0", "1.1"} {
		testimage.Push(t, repo+":"+v, testimage.Build(t, testimage.Options{Content: v,
			Labels: map[string]string{"org.opencontainers.image.version": v}}))
	}
	for _, tc := range []struct {
		name string
		addr func(testing.TB) string
		want []string
	}{
		{"down: no socket", faultproxy.MissingSocket, []string{"reading engine info: Cannot connect to the Docker daemon"}},
		{"down: stale socket", faultproxy.StaleSocket, []string{"reading engine info: Cannot connect to the Docker daemon"}},
		{"garbage: not HTTP", func(t testing.TB) string {
			return faultproxy.RawEngine(t, []byte("SSH-2.0-OpenSSH_9.2p1\r\n\x1b[2J"))
		}, []string{"reading engine info", "malformed HTTP response \"SSH-2.0-OpenSSH_9.2p1\""}},
		{"garbage: not JSON", func(t testing.TB) string {
			return faultproxy.Engine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "<html>it works!</html>")
			}))
		}, []string{"reading engine info: Error reading remote info: invalid character '<'"}},
		{"garbage: error answer", func(t testing.TB) string {
			return faultproxy.Engine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"message":"\u001b]0;pwned\u0007disk on fire"}`)
			}))
		}, []string{`reading engine info: Error response from daemon: \x1b]0;pwned\x07disk on fire`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cache := "--cache-dir=" + filepath.Join(dir, "cache")
			hostFaultDir(t, dir, repo, dh, "1.0")
			if r := pin(t, dir, "resolve", cache); r.code != 0 {
				t.Fatalf("clean run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			before, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))

			addr := tc.addr(t)
			hostFaultDir(t, dir, repo, addr, "1.1") // the lock would change
			r := pin(t, dir, "resolve", cache)
			t.Logf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			if r.code != 3 {
				t.Fatalf("exit %d, want 3", r.code)
			}
			noRawControls(t, "resolve", r.stdout+r.stderr)
			for _, w := range append(tc.want, `module "bad": host broken (`+addr+`): `, "pin.lock.hcl left unchanged") {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			// The other host's module is still decided and shown.
			if !strings.Contains(r.stdout, "good (at-least-running): update") || !strings.Contains(r.stdout, "new      1.1@") {
				t.Errorf("the module of the working host is not reported:\n%s", r.stdout)
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(before, after) {
				t.Errorf("the lock changed:\n%s", after)
			}

			if r := pin(t, dir, "plan", "broken"); r.code != 3 || !strings.Contains(r.stderr, "host broken") {
				t.Errorf("plan broken: exit %d\n%s", r.code, r.stderr)
			}
			r = pin(t, dir, "lock", "--from-host", "broken", "--snapshot", "broken.json", cache)
			if r.code != 3 || !strings.Contains(r.stderr, "no snapshot written") {
				t.Errorf("lock --from-host broken: exit %d\n%s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "broken.json")); !os.IsNotExist(err) {
				t.Error("a snapshot of the broken host was written")
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(before, after) {
				t.Errorf("the lock changed after lock --from-host:\n%s", after)
			}
		})
	}
}

// buildPin puts the pin command into dir, for tests that need whole
// processes: runs at once, a user other than root, the default timeouts.
// It is built once per test binary, as the release builds it
// (CGO_ENABLED=0, -trimpath, no symbol table: the binary users get, and
// the packages the release test and scripts/test's linux/amd64 build
// compile, so that a cold run compiles them once), and copied into dir.
func buildPin(t *testing.T, dir string) string {
	t.Helper()
	built, err := pinOnce()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pin")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// builtDir holds the binary pinOnce built; TestMain removes it.
var builtDir string

func removeBuilt() {
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
}

var pinOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "pin-bin-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	bin := filepath.Join(dir, "pin")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = filepath.Join(repoRoot, "cmd", "pin")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building pin: %v\n%s", err, out)
	}
	return bin, nil
})

// process is a pin process.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
}

func startPin(t *testing.T, bin, dir string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...)}
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

// wait waits for the process and returns its exit code.
func (p *process) wait() int {
	p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode()
}

// syncBuffer is a bytes.Buffer that a process writes while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eventually polls cond for 20s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestConcurrentResolve: two pin resolve processes at once on the same
// lock. The second waits for the first (it says so, naming the first on
// Linux), then reads the lock the first wrote and finds it up to date: the
// runs are serialised, not interleaved. A run interrupted while it waits writes nothing.
func TestConcurrentResolve(t *testing.T) {
	f := newFaultRepo(t)
	f.push(t, "1.1")
	bin := buildPin(t, t.TempDir())
	cache := "--cache-dir=" + filepath.Join(f.dir, "cache")
	// A slow registry keeps the first run busy (and holding the lock).
	f.px.Inject(faultproxy.TagList, 0, faultproxy.Delay(1500*time.Millisecond))

	asked := f.px.Count(faultproxy.TagList) // the clean run's
	first := startPin(t, bin, f.dir, "resolve", cache)
	eventually(t, "the first run to ask the registry", func() bool { return f.px.Count(faultproxy.TagList) > asked })
	second := startPin(t, bin, f.dir, "resolve", cache)
	eventually(t, "the second run to wait", func() bool { return strings.Contains(second.stderr.String(), "waiting for another pin run") })
	if c := first.wait(); c != 0 {
		t.Fatalf("first run: exit %d\n%s%s", c, first.stdout.String(), first.stderr.String())
	}
	if c := second.wait(); c != 0 {
		t.Fatalf("second run: exit %d\n%s%s", c, second.stdout.String(), second.stderr.String())
	}
	// The folder, absolute, also for the default lock path, and (on
	// Linux) the run that holds it.
	holder := "another pin run"
	if runtime.GOOS == "linux" {
		holder = fmt.Sprintf("another pin run (process %d)", first.cmd.Process.Pid)
	}
	if want := "pin: waiting for " + holder + " to release " + f.dir + "\n"; !strings.Contains(second.stderr.String(), want) {
		t.Errorf("second run does not say %q:\n%s", want, second.stderr.String())
	}
	if !strings.Contains(first.stdout.String(), "Wrote pin.lock.hcl.") || !strings.Contains(second.stdout.String(), "pin.lock.hcl is up to date.") {
		t.Errorf("want the first run to write and the second to find the lock up to date:\n%s\n---\n%s", first.stdout.String(), second.stdout.String())
	}
	var lists []faultproxy.Request
	for _, r := range f.px.Requests() {
		if r.Fault == "delay" { // the two runs', not the clean run's
			lists = append(lists, r)
		}
	}
	if len(lists) != 2 || lists[1].At.Sub(lists[0].At) < 1400*time.Millisecond {
		t.Errorf("the second run asked the registry while the first was still running: %+v", lists)
	}
	got := f.read(t)
	if _, diags := lock.Parse([]byte(got), "pin.lock.hcl"); diags.HasErrors() || !strings.Contains(got, `tag     = "1.1"`) {
		t.Errorf("the lock after both runs:\n%s\n%v", got, diags)
	}

	t.Run("interrupted while waiting", func(t *testing.T) {
		f.push(t, "1.2")
		before := f.read(t)
		asked := f.px.Count(faultproxy.TagList)
		first := startPin(t, bin, f.dir, "resolve", cache)
		eventually(t, "the first run to ask the registry", func() bool { return f.px.Count(faultproxy.TagList) > asked })
		second := startPin(t, bin, f.dir, "resolve", cache)
		eventually(t, "the second run to wait", func() bool { return strings.Contains(second.stderr.String(), "waiting for another pin run") })
		second.cmd.Process.Signal(os.Interrupt)
		code := second.wait()
		if code == 0 || !strings.Contains(second.stderr.String(), "waiting for the lock on "+f.dir+": context canceled") {
			t.Errorf("interrupted run: exit %d\n%s", code, second.stderr.String())
		}
		if got := f.read(t); got != before {
			t.Error("the interrupted run changed the lock")
		}
		if c := first.wait(); c != 0 || !strings.Contains(f.read(t), `tag     = "1.2"`) {
			t.Errorf("first run: exit %d\n%s", c, first.stderr.String())
		}
	})
}

// TestReadOnlyFolder: the lock would change, but its folder cannot be
// written. pin says so (exit 2) and the lock stays; with nothing to
// change, pin does not need to write and succeeds. Root ignores file
// modes, so as root the pin command runs as user nobody.
func TestReadOnlyFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a folder's mode does not stop writes on Windows")
	}
	dir, err := os.MkdirTemp("", "pin-ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	os.Chmod(dir, 0o755) // nobody must reach it
	// A copy of the example that nobody can read, wherever the checkout
	// lives (a clone in a 0700 folder is not readable by nobody).
	if err := os.CopyFS(filepath.Join(dir, "examples", "incident"), os.DirFS(filepath.Join(repoRoot, "examples", "incident"))); err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(filepath.Join(repoRoot, "catalogue.hcl"))
	cat := string(src)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644)
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatalf("clean run: %s", r.stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))

	run := func(args ...string) result { return pin(t, dir, args...) }
	if os.Getuid() == 0 {
		bin := buildPin(t, dir)
		run = func(args ...string) result {
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
			asNobody(cmd)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			if err != nil && cmd.ProcessState == nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("cannot run pin as nobody, required in CI: %v", err)
				}
				t.Skipf("cannot run pin as nobody: %v", err)
			}
			return result{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}

	// Nothing to change: nothing to write, and no error.
	if r := run("resolve"); r.code != 0 || !strings.Contains(r.stdout, "pin.lock.hcl is up to date.") {
		t.Errorf("unchanged lock in a read-only folder: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The lock would change: one module fewer.
	os.Chmod(dir, 0o755)
	i := strings.Index(cat, "# No version at all")
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat[:i]), 0o644)
	os.Chmod(dir, 0o555)
	r := run("resolve")
	t.Logf("exit %d\n%s", r.code, r.stderr)
	if r.code != 2 || !strings.Contains(r.stderr, "pin: writing lockfile pin.lock.hcl: ") || !strings.Contains(r.stderr, "permission denied") {
		t.Errorf("read-only folder: exit %d, want 2 and a message\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(before, after) {
		t.Error("the lock changed")
	}
}

// TestTimeouts: a registry that stalls and an engine that never answers,
// with --timeout=2s. Each run fails with exit 3, names what timed out, and
// leaves the lock byte-identical; the module of the working host is still
// reported.
func TestTimeouts(t *testing.T) {
	t.Parallel()
	reg := testenv.Registry(t)
	dh := testenv.DockerHost(t)
	bin := buildPin(t, t.TempDir())
	// No wall-clock assertion: the deadline shows in the message.
	check := func(t *testing.T, dir string, p *process, before []byte, want ...string) {
		t.Helper()
		code := p.wait()
		if code != 3 {
			t.Errorf("exit %d, want 3\n%s%s", code, p.stdout.String(), p.stderr.String())
		}
		for _, w := range want {
			if !strings.Contains(p.stdout.String()+p.stderr.String(), w) {
				t.Errorf("output lacks %q", w)
			}
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(before, after) {
			t.Error("the lock changed")
		}
	}

	t.Run("registry stalls", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := fmt.Sprintf("fault/stall-%d", time.Now().UnixNano())
		push := func(v string) {
			testimage.Push(t, reg+"/"+path+":"+v, testimage.Build(t, testimage.Options{Content: v}))
		}
		push("1.0")
		px := faultproxy.New(t, reg)
		os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(fmt.Sprintf("module \"app\" {\n  image  = \"%s/%s\"\n  policy = \"track-upstream\"\n}\n", px.Host, path)), 0o644)
		cache := "--cache-dir=" + filepath.Join(dir, "cache")
		if c := startPin(t, bin, dir, "resolve", cache).wait(); c != 0 {
			t.Fatalf("clean run: exit %d", c)
		}
		before, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
		push("1.1")
		px.Inject(faultproxy.Manifest(http.MethodGet, "1.1"), 0, faultproxy.Stall())
		p := startPin(t, bin, dir, "resolve", cache, "--timeout=2s")
		check(t, dir, p, before, "manifest of "+px.Host+"/"+path+":1.1", "context deadline exceeded", "pin.lock.hcl left unchanged")
		if n := px.Count(faultproxy.Manifest(http.MethodGet, "1.1")); n != 1 {
			t.Errorf("%d GETs of the stalled manifest, want 1: a timeout is not retried", n)
		}
	})

	t.Run("engine never answers", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		repo := fmt.Sprintf("%s/hostfault/slow-%d", reg, time.Now().UnixNano())
		for _, v := range []string{"1.0", "1.1"} {
			testimage.Push(t, repo+":"+v, testimage.Build(t, testimage.Options{Content: v}))
		}
		cache := "--cache-dir=" + filepath.Join(dir, "cache")
		hostFaultDir(t, dir, repo, dh, "1.0")
		if c := startPin(t, bin, dir, "resolve", cache).wait(); c != 0 {
			t.Fatalf("clean run: exit %d", c)
		}
		before, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
		silent := faultproxy.SilentEngine(t)
		hostFaultDir(t, dir, repo, silent, "1.1")
		p := startPin(t, bin, dir, "resolve", cache, "--timeout=2s")
		check(t, dir, p, before, `module "bad": host broken (`+silent+`): reading engine info: `, "context deadline exceeded",
			"good (at-least-running): update", "new      1.1@")
	})
}

// TestCredentialHelperNeverShown: credentials come from a credential
// helper (credHelpers in the Docker config) for a registry behind basic
// auth, reached through the fault proxy. The secret shows in no output
// (table, JSON, -v), no lock, no cache file and no error, when all goes
// well and under the auth faults: a wrong secret, a registry that echoes
// the Authorization header in its error, a token server on another host,
// a helper that fails.
func TestCredentialHelperNeverShown(t *testing.T) {
	addr, user, password := testenv.AuthRegistry(t)
	path := fmt.Sprintf("private/helper-%d", time.Now().UnixNano())
	auth := authn.FromConfig(authn.AuthConfig{Username: user, Password: password})
	for _, v := range []string{"3.0.0", "3.1.0"} {
		testimage.Push(t, addr+"/"+path+":"+v, testimage.Build(t, testimage.Options{Content: v}), auth)
	}
	px := faultproxy.New(t, addr)

	// The helper answers with the secret in a file (so that the test can
	// change it), and logs each call.
	bin, cfg, dir := t.TempDir(), t.TempDir(), t.TempDir()
	secretFile, calls := filepath.Join(bin, "secret"), filepath.Join(bin, "calls")
	helper := fmt.Sprintf(`#!/bin/sh
read server
echo "$1 $server" >> %q
case "$1" in
get) [ -s %q ] || { echo "no credentials for $server" >&2; exit 1; }
     printf '{"ServerURL":"%%s","Username":"%%s","Secret":"%%s"}' "$server" %q "$(cat %q)"
     [ -e %q ] && exit 1 ;;  # prints its answer, then fails
*) exit 1 ;;
esac
exit 0
`, calls, secretFile, user, secretFile, filepath.Join(bin, "fail"))
	os.WriteFile(filepath.Join(bin, "docker-credential-pintest"), []byte(helper), 0o755)
	os.WriteFile(filepath.Join(cfg, "config.json"), []byte(fmt.Sprintf(`{"credHelpers": {%q: "pintest"}}`, px.Host)), 0o600)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DOCKER_CONFIG", cfg)
	setSecret := func(s string) { os.WriteFile(secretFile, []byte(s), 0o600) }

	secrets := []string{password, user + ":" + password, base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
	noSecret := func(what string, texts ...string) {
		t.Helper()
		for _, s := range secrets {
			for _, text := range texts {
				if strings.Contains(text, s) {
					t.Errorf("%s shows the secret %q", what, s)
				}
			}
		}
	}
	files := func() []string { // the lock and every cached file
		var out []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, "catalogue.hcl") {
				b, _ := os.ReadFile(p)
				out = append(out, string(b))
			}
			return nil
		})
		return out
	}
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(fmt.Sprintf("module \"app\" {\n  image  = \"%s/%s\"\n  policy = \"track-upstream\"\n}\n", px.Host, path)), 0o644)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	setSecret(password)
	for _, args := range [][]string{{"resolve", "-v", "--format", "json"}, {"resolve", "-v"}, {"resolve", "--check", "-v"}} {
		r := pin(t, dir, append(args, cache)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		noSecret(strings.Join(args, " "), r.stdout, r.stderr)
	}
	lockBefore, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if !bytes.Contains(lockBefore, []byte(`tag     = "3.1.0"`)) {
		t.Fatalf("lock:\n%s", lockBefore)
	}
	if b, _ := os.ReadFile(calls); !strings.Contains(string(b), "get "+px.Host) {
		t.Fatalf("the credential helper was not asked (calls: %q)", b)
	}
	noSecret("the lock or the cache", files()...)

	// Under each fault, a newer version waits: the lock would change.
	testimage.Push(t, addr+"/"+path+":3.2.0", testimage.Build(t, testimage.Options{Content: "3.2.0"}), auth)
	thief := faultproxy.NewRecorder(t)
	for _, tc := range []struct {
		name   string
		setup  func()
		want   []string
		secret string // a secret of the case, also never shown
	}{
		{"wrong secret", func() { setSecret("wrong-" + password) }, []string{"401 Unauthorized"}, "wrong-" + password},
		{"echoed credentials", func() {
			px.Inject(faultproxy.Manifest(""), 0, faultproxy.EchoAuth(http.StatusForbidden))
		}, []string{`DENIED: credentials "<redacted>" refused`}, ""},
		{"token server on another host", func() {
			px.Inject(faultproxy.Any, 0, faultproxy.Headers(func(_ *http.Request, h http.Header) {
				if h.Get("WWW-Authenticate") != "" {
					h.Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="registry"`, thief.Host))
				}
			}))
		}, []string{"asks to authenticate at http://" + thief.Host + "/token, which is not on its host: credentials are not sent there"}, ""},
		// The helper's own stderr goes to pin's, unread by pin.
		{"helper fails", func() { setSecret("") }, []string{"reading credentials from the Docker config: error getting credentials - err: exit status 1"}, ""},
		// The Docker CLI's helper client puts what the helper printed in its
		// error: here, the secret.
		{"helper prints its answer and fails", func() {
			os.WriteFile(filepath.Join(bin, "fail"), nil, 0o644)
		}, []string{"error getting credentials - err: exit status 1 (what the helper printed is not shown)"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setSecret(password)
			os.Remove(filepath.Join(bin, "fail"))
			px.Clear()
			tc.setup()
			if tc.secret != "" {
				secrets = append(secrets, tc.secret, base64.StdEncoding.EncodeToString([]byte(user+":"+tc.secret)))
			}
			for _, args := range [][]string{{"resolve", "-v"}, {"resolve", "-v", "--format", "json"}} {
				r := pin(t, dir, append(args, cache)...)
				t.Logf("%v: exit %d\n%s", args, r.code, r.stderr)
				if r.code != 3 {
					t.Errorf("%v: exit %d, want 3\n%s%s", args, r.code, r.stdout, r.stderr)
				}
				for _, w := range tc.want {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("%v: stderr lacks %q", args, w)
					}
				}
				noSecret(strings.Join(args, " "), r.stdout, r.stderr)
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(after, lockBefore) {
				t.Errorf("the lock changed:\n%s", after)
			}
			noSecret("the lock or the cache", files()...)
		})
	}
	if got := thief.Requests(); len(got) != 0 {
		t.Errorf("the token server on another host was asked: %+v", got)
	}
	// Fault gone, good secret: the lock moves on.
	setSecret(password)
	os.Remove(filepath.Join(bin, "fail"))
	px.Clear()
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Errorf("after the faults: exit %d\n%s", r.code, r.stderr)
	}
}

// FuzzSanitize: whatever is printed has no raw control character, no line
// longer than the bound (and its ellipsis), and keeps its lines.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31mred\x1b[0m", "a\u202eb", strings.Repeat("x", 300), "é\xff\xfe", "l1\nl2\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := sanitize(s)
		if !stderrClean(out) {
			t.Fatalf("sanitize(%q) = %q: a raw control character", s, out)
		}
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("sanitize(%q) = %q: lines lost or added", s, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > maxPrintedLine+1 {
				t.Fatalf("a line of %d characters", n)
			}
			for _, run := range strings.Fields(l) {
				if n := utf8.RuneCountInString(run); n > maxPrintedRun+1 {
					t.Fatalf("a run of %d characters: %q", n, run)
				}
			}
		}
	})
}
