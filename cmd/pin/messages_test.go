package main

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestFlagErrors: a flag pin does not take is bad input (exit 2), and
// the message names the flags it is near and the command whose --help
// lists them. The messages are golden; each suggestion is then run, and
// is a flag the command takes; so is the --help it points to.
func TestFlagErrors(t *testing.T) {
	dir := incidentDir(t, nil)
	cases := [][]string{
		{"resolve", "--chek"},
		{"resolve", "--format", "json", "--chek"}, // errors are text on stderr, whatever the format
		{"resolve", "-check"},                     // one dash: read as shorthands
		{"--versio"},
		{"resolve", "--lok", "other.lock.hcl"},      // inherited
		{"resolve", "--cat", "catalogue.hcl"},       // a prefix
		{"outdated", "--fail-o", "regression"},      // one edit
		{"resolve", "--frobnicate"},                 // near nothing
		{"resolve", "-x"},                           // a shorthand: near nothing
		{"plan", "--timeout"},                       // not unknown: no suggestion
		{"resolve", "--timeout", "abc"},             // a bad value
		{"lock", "--from-hots", "mesh-1", "--chek"}, // the first is reported
	}
	var b strings.Builder
	for _, args := range cases {
		r := pin(t, dir, args...)
		fmt.Fprintf(&b, "$ pin %s\nexit %d\n%s%s\n", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		if r.code != exitInput {
			t.Errorf("pin %s: exit %d, want %d", strings.Join(args, " "), r.code, exitInput)
		}
		help := regexp.MustCompile(`(?m)^  (pin[a-z -]*) --help lists `).FindStringSubmatch(r.stderr)
		if help == nil {
			t.Errorf("pin %s: no --help named:\n%s", strings.Join(args, " "), r.stderr)
			continue
		}
		hr := pin(t, dir, append(strings.Fields(help[1])[1:], "--help")...)
		if hr.code != 0 || !strings.Contains(hr.stdout, "Flags:") {
			t.Errorf("%s --help: exit %d\n%s%s", help[1], hr.code, hr.stdout, hr.stderr)
		}
		near := regexp.MustCompile(`did you mean (--[a-z-]+)`).FindStringSubmatch(r.stderr)
		if near == nil {
			continue
		}
		if !strings.Contains(hr.stdout, near[1]+" ") {
			t.Errorf("%s --help does not list %s", help[1], near[1])
		}
		// The suggestion in place of what was written parses: any exit
		// but a flag error's.
		// (A second bad flag is then reported, and that one alone.)
		fixed := append([]string(nil), args...)
		wrong := ""
		for i, a := range fixed {
			if strings.HasPrefix(a, "-") && strings.Contains(r.stderr, a) {
				wrong, fixed[i] = a, near[1]
				break
			}
		}
		if fr := pin(t, dir, fixed...); wrong == "" || (strings.Contains(fr.stderr, "--help lists") && strings.Contains(fr.stderr, wrong+"\n")) {
			t.Errorf("pin %s, as suggested: %s", strings.Join(fixed, " "), fr.stderr)
		}
	}
	golden(t, "messages.flags.txt", b.String())
}

// TestRegistryAuthMessages: a module of a registry over TLS that wants
// basic auth (scripts/test's), with no credentials and with wrong ones:
// the plan and the JSON name the registry, the https URL asked and
// docker login; the golden files hold them (the registry's address as
// REGISTRY). Then the suggestion is run: docker login through the test
// Engine, into the Docker config pin reads; pin resolve then locks.
func TestRegistryAuthMessages(t *testing.T) {
	addr, tlsDir, user, password := testenv.TLSAuthRegistry(t)
	dh := testenv.DockerHost(t)
	repo := addr + "/messages/auth"
	img := testimage.Build(t, testimage.Options{Content: t.Name(), Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
		Labels: map[string]string{"org.opencontainers.image.version": "1.0.0"}})
	ref, err := name.NewTag(repo + ":1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithTransport(testenv.TLSTransport(t, tlsDir, false)),
		remote.WithAuth(&authn.Basic{Username: user, Password: password})); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), fmt.Sprintf(`registry %q {
  ca_file = %q
}

module "app" {
  image  = %q
  policy = "track-upstream"
}
`, addr, filepath.Join(tlsDir, "ca.pem"), repo))
	config := t.TempDir()
	t.Setenv("DOCKER_CONFIG", config)
	runs := 0
	resolve := func(flags ...string) result {
		t.Helper()
		runs++
		return pin(t, dir, append([]string{"resolve", "--cache-dir", filepath.Join(dir, fmt.Sprint("cache", runs))}, flags...)...)
	}
	var text, js strings.Builder
	for _, c := range []struct{ name, auth string }{
		{"no credentials", ""},
		{"a wrong password", base64.StdEncoding.EncodeToString([]byte(user + ":wrong-" + password))},
	} {
		conf := `{"auths": {}}`
		if c.auth != "" {
			conf = fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, addr, c.auth)
		}
		writeFile(t, filepath.Join(config, "config.json"), conf)
		r := resolve()
		if r.code != exitSource || strings.Contains(r.stderr, password) {
			t.Errorf("%s: exit %d, want %d (or the password shown)\n%s", c.name, r.code, exitSource, r.stderr)
		}
		fmt.Fprintf(&text, "# %s\n%s%s\n", c.name, r.stdout, r.stderr)
		r = resolve("--format", "json")
		fmt.Fprintf(&js, "# %s\n%s\n", c.name, r.stdout)
	}
	norm := func(s string) string { return strings.ReplaceAll(s, addr, "REGISTRY") }
	golden(t, "messages.registry-auth.txt", norm(text.String()))
	golden(t, "messages.registry-auth.json.txt", norm(js.String()))
	for _, want := range []string{"GET https://REGISTRY/v2/messages/auth/tags/list", "run docker login REGISTRY"} {
		if !strings.Contains(norm(text.String()), want) {
			t.Errorf("the messages lack %q", want)
		}
	}

	// What they say to run: docker login (the test Engine checks the
	// password against the registry; the CLI writes the Docker config).
	os.Remove(filepath.Join(config, "config.json"))
	login := exec.Command("docker", "-H", dh, "--config", config, "login", addr, "--username", user, "--password-stdin")
	login.Stdin = strings.NewReader(password)
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("docker login %s: %v\n%s", addr, err, out)
	}
	if r := resolve(); r.code != exitOK || !strings.Contains(readLock(t, dir), digestOf(t, img)) {
		t.Errorf("after docker login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestComposeErrorsHideOtherFiles: pin init --compose on a Compose file
// whose env_file, .env or include is not valid: stderr names the file and
// line, never a line of it (a secret is planted in each); the messages are
// golden (the folder as DIR). Then what the env file's message says to
// write (NAME=value lines) is written, and init works.
func TestComposeErrorsHideOtherFiles(t *testing.T) {
	const secret = "ghp_pl4ntedS3cret"
	var out strings.Builder
	for _, c := range []struct {
		name  string
		files map[string]string
	}{
		{"env_file", map[string]string{"compose.yaml": "services:\n  web:\n    image: nginx:1.25\n    env_file: web.env\n",
			"web.env": "A=1\nTOKEN=\"" + secret + "\n"}},
		{".env", map[string]string{"compose.yaml": "services:\n  web:\n    image: nginx:1.25\n    cpus: ${CPUS}\n",
			".env": "CPUS=" + secret + "\n"}},
		{"include", map[string]string{"compose.yaml": "include:\n  - other.yaml\nservices:\n  web:\n    image: nginx:1.25\n",
			"other.yaml": "services:\n  x:\n    image: a\n    foo: [" + secret + "\n"}},
	} {
		dir := t.TempDir()
		writeFiles(t, dir, c.files)
		for _, format := range []string{"table", "json"} {
			r := pin(t, dir, "init", "--compose", "compose.yaml", "--format", format)
			if r.code != exitInput || strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("%s: exit %d, want %d, and no secret:\n%s%s", c.name, r.code, exitInput, r.stdout, r.stderr)
			}
			fmt.Fprintf(&out, "# %s (--format %s)\n%s%s\n", c.name, format, r.stdout, strings.ReplaceAll(r.stderr, dir, "DIR"))
		}
		if c.name == "env_file" {
			writeFile(t, filepath.Join(dir, "web.env"), "A=1\nTOKEN="+secret+"\n")
			if r := pin(t, dir, "init", "--compose", "compose.yaml"); r.code != exitOK {
				t.Errorf("with NAME=value lines: exit %d\n%s", r.code, r.stderr)
			}
		}
	}
	golden(t, "messages.compose-secrets.txt", out.String())
}

// TestPermissionHint: pin, run as a user who may not write the lock's
// folder (uid 65534 in a folder of root's), says which user it runs as,
// who owns the folder, and what to do; in the container image
// (PIN_CONTAINER_IMAGE set), the docker run --user that does it (the image
// itself is run so in internal/release). The messages are golden; then the
// folder is given to the user, as the message says, and the lock is
// written.
func TestPermissionHint(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("needs root, to run pin as another user: required in CI")
		}
		t.Skip("needs root, to run pin as another user")
	}
	dir, err := os.MkdirTemp("", "pin-perm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	// The incident is copied in, readable by every user: the checkout may
	// sit in a folder only root enters (a CI clone under mktemp -d).
	src, _ := os.ReadFile(filepath.Join(repoRoot, "catalogue.hcl"))
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), string(src))
	if err := os.CopyFS(filepath.Join(dir, "examples", "incident"), os.DirFS(filepath.Join(repoRoot, "examples", "incident"))); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(filepath.Join(dir, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	binDir, err := os.MkdirTemp("", "pin-perm-bin") // reachable by every user
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(binDir) })
	os.Chmod(binDir, 0o755)
	bin := buildPin(t, binDir)
	const nobody = 65534
	run := func(env ...string) (int, string) {
		cmd := exec.Command(bin, "resolve")
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}, env...)
		asNobody(cmd)
		var errb strings.Builder
		cmd.Stderr = &errb
		cmd.Run()
		return cmd.ProcessState.ExitCode(), regexp.MustCompile(`\.pin\.lock\.hcl[0-9]+`).ReplaceAllString(strings.ReplaceAll(errb.String(), dir, "DIR"), ".pin.lock.hclNNN")
	}
	var out strings.Builder
	for _, env := range [][]string{nil, {"PIN_CONTAINER_IMAGE=1"}} {
		code, stderr := run(env...)
		if code != exitInput || !strings.Contains(stderr, "permission denied") {
			t.Errorf("%v: exit %d, want %d and permission denied\n%s", env, code, exitInput, stderr)
		}
		fmt.Fprintf(&out, "# as uid %d, env %v\n%s\n", nobody, env, stderr)
	}
	golden(t, "messages.permission.txt", out.String())
	if !strings.Contains(out.String(), fmt.Sprintf("or let uid %d write to DIR", nobody)) {
		t.Fatalf("no advice to act on:\n%s", out.String())
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if code, stderr := run(); code != exitOK {
		t.Errorf("the folder given to uid %d: exit %d\n%s", nobody, code, stderr)
	}
}
