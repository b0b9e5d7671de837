//go:build linux

package authz

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// EnvAuthzDown, when set, makes TestAuthzAgainstDockerd also stop the
// plugin and show what the Engine does then: every request fails after
// about 32 s of retries, so it is not run by default.
const EnvAuthzDown = "PIN_TEST_AUTHZ_DOWN"

// TestAuthzAgainstDockerd starts pin's plugin, then a dockerd of its own
// (not the suite's shared one) with --authorization-plugin naming it, and
// drives it with the docker CLI. Container forgejo, which module forge
// takes over, runs 1.27.3 from a real registry: docker run --name forgejo
// with 1.22.6 is denied with resolve's words; as Compose replaces it
// (renamed, the new one with the same project and service labels) 1.22.6
// is denied and 1.28.0 runs; a container no module takes over runs
// 1.22.6. dockerd is stopped before the plugin.
func TestAuthzAgainstDockerd(t *testing.T) {
	testenv.DockerHost(t) // root and a Docker Engine: skip, or fail under CI
	reg := testenv.Registry(t)
	dir := engineDir(t)
	engine := "unix://" + filepath.Join(dir, "docker.sock")

	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/authz/forgejo-%d", reg, id)
	for _, v := range []struct{ tag, date string }{{"1.22.6", "2024-12-12"}, {"1.27.3", "2026-09-01"}, {"1.28.0", "2026-10-01"}} {
		testimage.PushRelease(t, repo, v.tag, v.date, testimage.Options{Layer: testimage.Sleeper(t), Entrypoint: []string{testimage.SleeperPath}})
	}
	cat := fmt.Sprintf(`host "mesh" {
  docker = %q
}

module "forge" {
  image  = %q
  policy = "at-least-running"
  runs_on "mesh" {
    container = "forgejo"
  }
}
`, engine, repo)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	e, _, err := enforce.Load(filepath.Join(dir, "catalogue.hcl"), filepath.Join(dir, "pin.lock.hcl"),
		source.Options{CacheDir: filepath.Join(dir, "cache"), Concurrency: 4, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	logs := &testenv.Buffer{}
	eng := startEngine(t, dir, &Server{Enforcer: e, Host: "mesh", Engine: e.Hosts["mesh"].(Engine), Log: slog.New(slog.NewJSONHandler(logs, nil))})
	plugin, docker, stopPlugin := eng.plugin, eng.docker, eng.stopPlugin
	run := func(name, tag string, labels ...string) (string, error) {
		args := []string{"run", "-d", "--network", "none", "--name", name}
		for _, l := range labels {
			args = append(args, "--label", l)
		}
		return docker(append(args, repo+":"+tag)...)
	}
	compose := []string{ComposeProject + "=forge-stack", ComposeService + "=forgejo"}

	if out, err := run("forgejo", "1.27.3", compose...); err != nil {
		t.Fatalf("first forgejo refused: %v\n%s", err, out)
	}
	out, err := run("forgejo", "1.22.6", compose...)
	for _, want := range []string{"authorization denied by plugin " + plugin, `pin: module "forge": refusing a downgrade: the new image 1.22.6`,
		"older than what mesh/forgejo runs", "version 1.22.6 < 1.27.3", enforce.AllowDowngradeKey} {
		if err == nil || !strings.Contains(out, want) {
			t.Fatalf("older image over forgejo: want %q, got %v\n%s", want, err, out)
		}
	}

	// As Compose replaces a container: the old one renamed, the new one
	// with its name and the same project and service labels.
	if out, err := docker("rename", "forgejo", "0a1b2c3d_forgejo"); err != nil {
		t.Fatalf("rename: %v\n%s", err, out)
	}
	out, err = run("forgejo", "1.22.6", compose...)
	if err == nil || !strings.Contains(out, "older than what mesh/0a1b2c3d_forgejo runs") {
		t.Errorf("older image over the renamed Compose service: want a refusal, got %v\n%s", err, out)
	}
	if out, err := run("forgejo", "1.28.0", compose...); err != nil {
		t.Errorf("newer image refused: %v\n%s", err, out)
	}
	if out, err := run("scratch-tool", "1.22.6"); err != nil {
		t.Errorf("a container no module takes over was refused: %v\n%s", err, out)
	}
	if l := logs.String(); !strings.Contains(l, `"verdict":"downgrade","allowed":false`) || !strings.Contains(l, `"verdict":"upgrade","allowed":true`) {
		t.Errorf("decisions not logged:\n%s", l)
	}

	if os.Getenv(EnvAuthzDown) != "" {
		// The plugin stops: the Engine refuses everything, after retries.
		stopPlugin()
		start := time.Now()
		out, err := docker("ps")
		t.Logf("plugin down: docker ps after %s: %v\n%s", time.Since(start).Round(time.Second), err, out)
		if err == nil || !strings.Contains(out, "plugin "+plugin+" failed with error") {
			t.Errorf("plugin down: want the Engine's plugin error, got %v\n%s", err, out)
		}
	}
	for _, c := range []string{"forgejo", "0a1b2c3d_forgejo", "scratch-tool"} {
		if eng.pluginUp() {
			docker("rm", "-f", c)
		}
	}
}

// daemon is a dockerd of a test's own whose authorization plugin is pin's
// Server (which the test may swap for another between requests).
type daemon struct {
	addr    string // unix://…/docker.sock
	plugin  string // the plugin's name
	handler *swapHandler
	docker  func(args ...string) (string, error)
	// stopPlugin stops the plugin; pluginUp tells whether it serves.
	stopPlugin func()
	pluginUp   func() bool
}

// swapHandler serves with the Server last set.
type swapHandler struct{ s atomic.Pointer[Server] }

func (h *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.s.Load().ServeHTTP(w, r) }

// startEngine starts pin's plugin serving srv on a socket in dir, then a
// dockerd (its data in dir) with --authorization-plugin naming it, and
// waits until the Engine answers; dockerd is stopped before the plugin.
// The Engine's address is unix://dir/docker.sock: srv's catalogue must
// name it.
func startEngine(t *testing.T, dir string, srv *Server) *daemon {
	t.Helper()
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		t.Fatal("dockerd not in PATH although the suite's Engine runs")
	}
	eng := &daemon{addr: "unix://" + filepath.Join(dir, "docker.sock"), plugin: fmt.Sprintf("pin-authz-test-%d-%s", os.Getpid(), filepath.Base(dir)), handler: &swapHandler{}}
	eng.handler.s.Store(srv)
	sock := filepath.Join(dir, "authz.sock")

	// The plugin first: dockerd asks it at start-up, and gives up after
	// about 16 s of retries.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: eng.handler, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	up := true
	eng.stopPlugin = func() {
		if up {
			hs.Close()
			up = false
		}
	}
	eng.pluginUp = func() bool { return up }
	// The plugin stops after dockerd (whose cleanup, registered later,
	// runs first), and also when the set-up below fails.
	t.Cleanup(eng.stopPlugin)
	if err := os.MkdirAll("/etc/docker/plugins", 0o755); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join("/etc/docker/plugins", eng.plugin+".spec")
	if err := os.WriteFile(spec, []byte("unix://"+sock+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(spec) })

	eng.docker = func(args ...string) (string, error) {
		cmd := exec.Command("docker", append([]string{"-H", eng.addr}, args...)...)
		cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+filepath.Join(dir, "cli"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	d := testenv.Dockerd(t, dockerd, dir, eng.addr, "--authorization-plugin="+eng.plugin)
	testenv.StartDaemon(t, d, filepath.Join(dir, "dockerd.log"), func() bool {
		_, err := eng.docker("version")
		return err == nil
	})
	return eng
}

// engineDir is a folder of a test's own for a dockerd and the plugin's
// socket, under /tmp (unix socket paths are short), removed at the end.
func engineDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "pin-authz-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanDir(t, dir) })
	return dir
}

// cleanDir unmounts what a stopped dockerd may have left under dir and
// removes it.
func cleanDir(t *testing.T, dir string) {
	testenv.UnmountUnder(dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Logf("removing %s: %v", dir, err)
	}
}
