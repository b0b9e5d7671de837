package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// dockerCompose runs Debian's docker-compose (1.29) on the test engine, in
// dir, with env added.
func dockerCompose(t *testing.T, dh, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("docker-compose", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "DOCKER_HOST="+dh), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docker-compose %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestComposeEndToEnd runs the Compose guide's path (docs/guides/compose.md)
// on a real Compose, a real engine and a real registry: examples/compose/
// comes up on floating tags; pin init --from-host and --compose scaffold
// it (the second adds nothing); pin resolve locks what runs; pin export writes the override
// the catalogue's export block declares (with the test's own project
// name, --project-name, as -p), and "up -d" with it runs exactly the
// locked digests; pin plan says SAME. Then the upstream tag moves and the
// stack is re-pulled: pin outdated and pin export --check report it.
func TestComposeEndToEnd(t *testing.T) {
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	if _, err := exec.LookPath("docker-compose"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker-compose required in CI (scripts/test installs Debian's docker-compose)")
		}
		t.Skip("docker-compose not installed")
	}
	id := time.Now().UnixNano()
	prefix := fmt.Sprintf("%s/compose-%d", reg, id)
	project := fmt.Sprintf("pinstack%d", id)
	env := []string{"REGISTRY=" + prefix}
	t.Setenv("REGISTRY", prefix) // for pin's own reading of the Compose file

	sleeper := testimage.Sleeper(t)
	push := func(ref, date string) string {
		created, _ := time.Parse("2006-01-02", date)
		img := testimage.Build(t, testimage.Options{Layer: sleeper, Entrypoint: []string{testimage.SleeperPath}, Created: created,
			Labels: map[string]string{"built": date}})
		return testimage.Push(t, ref, img).DigestStr()
	}
	webA := push(prefix+"/web:latest", "2026-09-01")
	workerA := push(prefix+"/worker:stable", "2026-09-02")

	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "assets"), 0o755)
	for _, f := range []string{"compose.yaml", "catalogue.hcl", "assets/Dockerfile"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "examples/compose", f))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("unix:///var/run/docker.sock"), []byte(dh))
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	compose := func(args ...string) string {
		return dockerCompose(t, dh, dir, env, append([]string{"-p", project}, args...)...)
	}
	// web runs two replicas: one module takes over both.
	compose("-f", "compose.yaml", "up", "-d", "--scale", "web=2")
	t.Cleanup(func() {
		cmd := exec.Command("docker-compose", "-p", project, "-f", "compose.yaml", "down", "-t", "0")
		cmd.Dir, cmd.Env = dir, append(append(os.Environ(), "DOCKER_HOST="+dh), env...)
		cmd.Run()
	})
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	// Scaffold from the host: one module per Compose service, whatever its
	// replicas.
	r := pin(t, dir, "init", "--from-host", "dock", cache)
	if r.code != 0 {
		t.Fatalf("init --from-host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cat, _ := os.ReadFile(filepath.Join(dir, "catalogue.hcl"))
	if n := bytes.Count(cat, []byte("module ")); n != 2 {
		t.Errorf("init --from-host wrote %d modules, want 2 (web and worker)", n)
	}
	for _, want := range []string{`module "web"`, `runs_on "dock" { compose = "` + project + `/web" }`, `module "worker"`, `image  = "` + prefix + `/worker"`} {
		if !bytes.Contains(cat, []byte(want)) {
			t.Errorf("catalogue lacks %s:\n%s", want, cat)
		}
	}
	// From the Compose file: everything is there already; assets is
	// reported, not added; nothing is rewritten.
	r = pin(t, dir, "init", "--compose", "compose.yaml", "--project-name", project, "--host", "dock", "--profile", "build")
	if after, _ := os.ReadFile(filepath.Join(dir, "catalogue.hcl")); r.code != 0 || !bytes.Equal(after, cat) {
		t.Fatalf("init --compose after --from-host: exit %d, catalogue changed %v\n%s%s", r.code, !bytes.Equal(after, cat), r.stdout, r.stderr)
	}
	for _, want := range []string{`service web: module "web" already takes it over`, "service assets: it is only built"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("init --compose output lacks %q:\n%s", want, r.stdout)
		}
	}

	// Into a new catalogue, with the digest each tag names now, asked of
	// the registry.
	r = pin(t, dir, "init", "--compose", "compose.yaml", "--project-name", project, "--digest", "--catalogue", "fresh.hcl", cache)
	fresh, _ := os.ReadFile(filepath.Join(dir, "fresh.hcl"))
	if r.code != 0 || !bytes.Contains(fresh, []byte(`pin    = "latest@`+webA+`"`)) || !bytes.Contains(fresh, []byte(`pin    = "stable@`+workerA+`"`)) {
		t.Fatalf("init --digest: exit %d\n%s\n%s%s", r.code, fresh, r.stdout, r.stderr)
	}

	// Lock what runs.
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The override, and a second run that changes nothing.
	if r := pin(t, dir, "export", "--project-name", project, cache); r.code != 0 {
		t.Fatalf("export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	override, _ := os.ReadFile(filepath.Join(dir, "compose.pin.yaml"))
	for _, want := range []string{"image: " + prefix + "/web:latest@" + webA, "image: " + prefix + "/worker:stable@" + workerA} {
		if !bytes.Contains(override, []byte(want)) {
			t.Errorf("override lacks %s:\n%s", want, override)
		}
	}
	if r := pin(t, dir, "export", "--project-name", project, "--check", cache); r.code != 0 {
		t.Fatalf("export --check right after export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The tag moves upstream; up -d with the override still runs exactly
	// the lock. The engine has pulled the moved tag, so that "latest"
	// alone would now start B.
	webB := push(prefix+"/web:latest", "2026-10-01")
	dockerCLI(t, dh, "pull", "-q", prefix+"/web:latest")
	compose("-f", "compose.yaml", "-f", "compose.pin.yaml", "up", "-d", "--scale", "web=2")
	// runs says what each container of service runs, by the repo digests
	// of its image (the engine's inspect), one line per container.
	runs := func(service string, replicas int) string {
		ids := strings.Fields(compose("-f", "compose.yaml", "ps", "-q", service))
		if len(ids) != replicas {
			t.Fatalf("service %s has containers %v, want %d", service, ids, replicas)
		}
		var out []string
		for _, id := range ids {
			img := dockerCLI(t, dh, "inspect", "-f", "{{.Image}}", id)
			out = append(out, dockerCLI(t, dh, "image", "inspect", "-f", "{{range .RepoDigests}}{{.}} {{end}}", img))
		}
		return strings.Join(out, "\n")
	}
	if got := runs("web", 2); strings.Count(got, webA) != 2 || strings.Contains(got, webB) {
		t.Errorf("web runs %s, want the locked %s", got, webA)
	}
	if got := runs("worker", 1); !strings.Contains(got, workerA) {
		t.Errorf("worker runs %s, want the locked %s", got, workerA)
	}
	if r := pin(t, dir, "plan", "dock", cache); r.code != 0 || strings.Count(r.stdout, "SAME") != 3 {
		t.Fatalf("plan after up -d with the override: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The stack is re-pulled on its floating tags: web now runs B, newer
	// than the lock. outdated says so, and the override would downgrade it.
	compose("-f", "compose.yaml", "pull", "-q")
	compose("-f", "compose.yaml", "up", "-d", "--scale", "web=2")
	if got := runs("web", 2); strings.Count(got, webB) != 2 {
		t.Fatalf("web runs %s after the re-pull, want %s", got, webB)
	}
	t.Logf("init --compose:\n%s", r.stdout)
	r = pin(t, dir, "outdated", cache)
	if r.code != 1 || !strings.Contains(r.stdout, "behind-running") {
		t.Errorf("outdated after the re-pull: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("outdated:\n%s", r.stdout)
	r = pin(t, dir, "export", "--project-name", project, "--check", cache)
	t.Logf("export --check:\n%s%s", r.stdout, r.stderr)
	if r.code != 1 || !strings.Contains(r.stderr, "(module web): DOWNGRADE") {
		t.Errorf("export --check after the re-pull: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The JSON says the refusal too: the cutover, where and whose.
	r = pin(t, dir, "export", "--project-name", project, "--check", "--format", "json", cache)
	validate(t, compileSchemas(t)["export.schema.json"], "export --check --format json, a downgrade", r.stdout)
	if r.code != 1 || !strings.Contains(r.stdout, `"kind": "cutover"`) || !strings.Contains(r.stdout, `"module": "web"`) {
		t.Errorf("export --check --format json after the re-pull: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "compose.pin.yaml")); !bytes.Equal(after, override) {
		t.Error("export --check wrote the override")
	}
	// resolve takes the newer build; export follows.
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve after the re-pull: exit %d\n%s", r.code, r.stderr)
	}
	if r := pin(t, dir, "export", "--project-name", project, cache); r.code != 0 {
		t.Fatalf("export after resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "compose.pin.yaml")); !bytes.Contains(after, []byte("web:latest@"+webB)) {
		t.Errorf("override after resolve:\n%s", after)
	}
}
