//go:build linux

package authz

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestAuthzComposeRenameAgainstDockerd: on a dockerd whose authorization
// plugin is pin, forgejo (module forge, 1.27.3, with Compose's project
// and service labels) is renamed as Compose renames it while recreating
// the service ("<its ID's first 12 hex digits>_forgejo"); a create of the
// service's next replica with the same labels at 1.22.6 is denied, naming
// the renamed container as the floor, as it is before the rename.
func TestAuthzComposeRenameAgainstDockerd(t *testing.T) {
	testenv.DockerHost(t) // root and a Docker Engine: skip, or fail under CI
	reg := testenv.Registry(t)
	dir := engineDir(t)
	addr := "unix://" + filepath.Join(dir, "docker.sock")
	repo := fmt.Sprintf("%s/authz/compose-%d", reg, time.Now().UnixNano())
	for _, v := range []struct{ tag, date string }{{"1.22.6", "2024-12-12"}, {"1.27.3", "2026-09-01"}} {
		testimage.PushRelease(t, repo, v.tag, v.date, testimage.Options{Layer: testimage.Sleeper(t), Entrypoint: []string{testimage.SleeperPath}})
	}
	catPath, lockPath := filepath.Join(dir, "catalogue.hcl"), filepath.Join(dir, "pin.lock.hcl")
	if err := os.WriteFile(catPath, []byte(fmt.Sprintf(`host "mesh" {
  docker = %q
}

module "forge" {
  image  = %q
  policy = "at-least-running"
  runs_on "mesh" {
    container = "forgejo"
  }
}
`, addr, repo)), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := source.Options{CacheDir: filepath.Join(dir, "cache"), Concurrency: 4, Timeout: 10 * time.Second}
	server := func() *Server {
		t.Helper()
		e, _, err := enforce.Load(catPath, lockPath, opts)
		if err != nil {
			t.Fatal(err)
		}
		return &Server{Enforcer: e, Host: "mesh", Engine: e.Hosts["mesh"].(Engine), Log: slog.New(slog.NewJSONHandler(&testenv.Buffer{}, nil))}
	}
	eng := startEngine(t, dir, server())
	docker := eng.docker
	labels := []string{"--label", "com.docker.compose.project=forge-stack", "--label", "com.docker.compose.service=forgejo"}
	t.Cleanup(func() {
		if eng.pluginUp() {
			out, _ := docker("ps", "-aq")
			for _, id := range strings.Fields(out) {
				docker("rm", "-f", id)
			}
		}
	})
	id, err := docker(append(append([]string{"run", "-d", "--network", "none", "--name", "forgejo"}, labels...), repo+":1.27.3")...)
	if err != nil {
		t.Fatalf("forgejo 1.27.3: %v\n%s", err, id)
	}
	if id, err = docker("inspect", "--format", "{{.Id}}", "forgejo"); err != nil {
		t.Fatalf("inspect forgejo: %v\n%s", err, id)
	}
	id = strings.TrimSpace(id)
	writeLock(t, catPath, lockPath, opts)
	eng.handler.s.Store(server())

	replica := func(name string) (string, error) {
		return docker(append(append([]string{"create", "--network", "none", "--name", name}, labels...), repo+":1.22.6")...)
	}
	if out, err := replica("forge-stack_forgejo_2"); err == nil || !strings.Contains(out, "refusing a downgrade") {
		t.Errorf("create forge-stack_forgejo_2 at 1.22.6 beside forgejo: %v\n%s", err, out)
	}
	renamed := id[:12] + "_forgejo"
	if out, err := docker("rename", "forgejo", renamed); err != nil {
		t.Fatalf("rename forgejo %s: %v\n%s", renamed, err, out)
	}
	out, err := replica("forge-stack_forgejo_3")
	if err == nil || !strings.Contains(out, "authorization denied by plugin "+eng.plugin) || !strings.Contains(out, "refusing a downgrade") || !strings.Contains(out, "mesh/"+renamed) {
		t.Errorf("create forge-stack_forgejo_3 at 1.22.6 beside %s (1.27.3): %v\n%s", renamed, err, out)
	}
}
