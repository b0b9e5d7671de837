package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// The guides about hosts (Compose, Kubernetes, a Docker Engine's plugin,
// signatures, fleets) and installing pin, run word for word against the
// real component each is about: the guide's catalogue as written, its
// commands as written, its output as shown, with the substitutions each
// test names (the test's own registry and engine for the guide's
// placeholders, the digests it pushed for the ones shown).

// shLine is one command line of a guide's sh block: its words, without
// the comment, and the exit code the comment says ("(exit 1)"), else 0.
type shLine struct {
	text  string
	words []string
	code  int
}

var exitNote = regexp.MustCompile(`\(exit (\d)\)`)

// shBlock returns the command lines of the guide's first fenced block
// after marker.
func shBlock(t *testing.T, guide, marker string) []shLine {
	t.Helper()
	var out []shLine
	for _, l := range docBlock(t, guide, marker) {
		cmd, comment, _ := strings.Cut(l, "#")
		if strings.TrimSpace(cmd) == "" {
			continue
		}
		sl := shLine{text: strings.TrimSpace(cmd), words: strings.Fields(cmd)}
		if m := exitNote.FindStringSubmatch(comment); m != nil {
			sl.code, _ = strconv.Atoi(m[1])
		}
		out = append(out, sl)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no command after %q", guide, marker)
	}
	return out
}

// normalizer rewrites what a test saw into the guide's terms: each pair
// is (what the test has, what the guide shows), applied in order.
type normalizer []string

func (n normalizer) apply(s string) string {
	return strings.NewReplacer(n...).Replace(s)
}

// digestAs maps the digest the test pushed to the one the guide shows:
// its first twelve hexadecimal digits (the short form pin prints, and the
// start of the full one, whose rest the guide leaves out with "…").
func digestAs(real, shown string) []string {
	return []string{strings.TrimPrefix(real, "sha256:")[:12], shown}
}

// needCompose is Debian's docker-compose (Compose 1.29), which the tests
// run for the guides' "docker compose".
func needCompose(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("docker-compose"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker-compose required in CI (scripts/test installs Debian's docker-compose)")
		}
		t.Skip("docker-compose not installed")
	}
}

// TestGuideCompose runs docs/guides/compose.md word for word: its
// compose.yaml and catalogue.hcl as the folder (checked to be those of
// examples/compose), its commands in order on the test engine with
// docker-compose 1.29 for "docker compose", and its output as shown. The
// substitutions: REGISTRY names a folder of the test registry (the guide
// shows registry.example.org/stack, the file's default), the host's
// socket is the test engine's, Compose 1's container names (stack_web_1)
// read as Compose 2's (stack-web-1), and the builds pushed read as the
// digests the guide shows. What up -d starts is checked with the
// engine's inspect.
func TestGuideCompose(t *testing.T) {
	const guide = "docs/guides/compose.md"
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	needCompose(t)
	prefix := fmt.Sprintf("%s/guide-compose-%d", reg, time.Now().UnixNano())
	t.Setenv("REGISTRY", prefix) // for pin's own reading of the Compose file
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	// The folder is examples/compose, which holds the guide's compose.yaml
	// and catalogue.hcl (their lines, in order, between its comments).
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "examples", "compose"))); err != nil {
		t.Fatal(err)
	}
	reproduces(t, "examples/compose/compose.yaml", docBlock(t, guide, "is a stack as people write it"), string(mustRead(t, filepath.Join(dir, "compose.yaml"))))
	reproduces(t, "examples/compose/catalogue.hcl", docBlock(t, guide, "and its `catalogue.hcl` declares"), string(mustRead(t, filepath.Join(dir, "catalogue.hcl"))))
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		if !strings.Contains(s, `"unix:///var/run/docker.sock"`) {
			t.Fatalf("examples/compose/catalogue.hcl names no docker socket to replace with the test engine's:\n%s", s)
		}
		return strings.ReplaceAll(s, "unix:///var/run/docker.sock", dh)
	})

	sleeper := testimage.Sleeper(t)
	push := func(ref, date string) string {
		created, _ := time.Parse(time.DateOnly, date)
		img := testimage.Build(t, testimage.Options{Layer: sleeper, Entrypoint: []string{testimage.SleeperPath}, Created: created,
			Labels: map[string]string{"built": date}})
		return testimage.Push(t, ref, img).DigestStr()
	}
	webA := push(prefix+"/web:latest", "2026-09-01")
	workerA := push(prefix+"/worker:stable", "2026-09-02")

	compose := func(args ...string) string {
		return dockerCompose(t, dh, dir, nil, args...)
	}
	down := func() {
		cmd := exec.Command("docker-compose", "-p", "stack", "-f", "compose.yaml", "down", "-t", "0")
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "DOCKER_HOST="+dh)
		cmd.Run()
	}
	down() // a stack left by an earlier run of the test on this engine
	t.Cleanup(down)

	var norm normalizer
	setNorm := func(webB string) {
		norm = normalizer{prefix, "registry.example.org/stack", "stack_web_1", "stack-web-1", "stack_worker_1", "stack-worker-1"}
		norm = append(norm, digestAs(webA, "d39e489d23ac")...)
		norm = append(norm, digestAs(workerA, "004bd17040d3")...)
		if webB != "" {
			norm = append(norm, digestAs(webB, "14fe214e5cda")...)
		}
	}
	setNorm("")
	// runs is the repo digests of the image each container of service
	// runs, from the engine's inspect.
	runs := func(service string) string {
		var out []string
		for _, id := range strings.Fields(compose("-p", "stack", "-f", "compose.yaml", "ps", "-q", service)) {
			img := dockerCLI(t, dh, "inspect", "-f", "{{.Image}}", id)
			out = append(out, dockerCLI(t, dh, "image", "inspect", "-f", "{{range .RepoDigests}}{{.}} {{end}}", img))
		}
		return strings.Join(out, "\n")
	}
	// run runs a command line of the guide and returns what it printed.
	run := func(l shLine) string {
		t.Helper()
		switch {
		case len(l.words) > 2 && l.words[0] == "docker" && l.words[1] == "compose":
			return compose(l.words[2:]...)
		case l.words[0] == "pin":
			r := pin(t, dir, l.words[1:]...)
			if r.code != l.code {
				t.Fatalf("%s: exit %d, the guide says %d\n%s%s", l.text, r.code, l.code, r.stdout, r.stderr)
			}
			return norm.apply(r.stdout + r.stderr)
		}
		t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		return ""
	}

	for _, l := range shBlock(t, guide, "In that folder:") {
		before := string(mustRead(t, filepath.Join(dir, "catalogue.hcl")))
		got := run(l)
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s", l.text, got)
		}
		switch l.text {
		case "pin init --from-host dock":
			reproduces(t, l.text, docBlock(t, guide, "`init --from-host` recognises"), norm.apply(string(mustRead(t, filepath.Join(dir, "catalogue.hcl")))))
		case "pin init --compose compose.yaml --project-name stack --host dock --profile build":
			reproduces(t, l.text, docBlock(t, guide, "`init --compose` then adds nothing"), got)
			if after := string(mustRead(t, filepath.Join(dir, "catalogue.hcl"))); after != before {
				t.Errorf("%s changed the catalogue:\n%s", l.text, after)
			}
		case "pin export":
			reproduces(t, l.text, docBlock(t, guide, "`export` writes `compose.pin.yaml`"), norm.apply(string(mustRead(t, filepath.Join(dir, "compose.pin.yaml")))))
		case "docker compose -p stack -f compose.yaml -f compose.pin.yaml up -d":
			if got := runs("web"); !strings.Contains(got, webA) {
				t.Errorf("web runs %s, want the locked %s", got, webA)
			}
			if got := runs("worker"); !strings.Contains(got, workerA) {
				t.Errorf("worker runs %s, want the locked %s", got, workerA)
			}
		case "pin plan dock":
			reproduces(t, l.text, docBlock(t, guide, "`pin plan dock` then finds"), got)
		}
	}

	// web:latest moves upstream; the stack is pulled and brought up on its
	// floating tags.
	webB := push(prefix+"/web:latest", "2026-10-01")
	setNorm(webB)
	override := string(mustRead(t, filepath.Join(dir, "compose.pin.yaml")))
	for _, l := range shBlock(t, guide, "has moved upstream to a newer build") {
		got := run(l)
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s", l.text, got)
		}
		switch l.text {
		case "docker compose -p stack up -d":
			if got := runs("web"); !strings.Contains(got, webB) {
				t.Fatalf("web runs %s after the pull, want the newer %s", got, webB)
			}
		case "pin outdated":
			reproduces(t, l.text, docBlock(t, guide, "`pin outdated` reports web"), trimLines(got))
		case "pin export --check":
			reproduces(t, l.text, docBlock(t, guide, "and `pin export --check` refuses"), got)
			if after := string(mustRead(t, filepath.Join(dir, "compose.pin.yaml"))); after != override {
				t.Errorf("%s wrote compose.pin.yaml", l.text)
			}
		}
	}
}
