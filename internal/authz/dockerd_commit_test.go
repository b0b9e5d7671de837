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

// TestAuthzCommittedImageAgainstDockerd: on a real Docker Engine with
// pin's plugin, an image committed from a container (docker commit, tagged
// 1.28.0 and labelled org.opencontainers.image.version=1.28.0) has no
// registry digest: a create of the module's container from it is refused,
// as a local build is judged by its image ID alone, and the refusal says
// so (its tag and label are claims pin cannot check), never that it has
// no version in its tag or label.
func TestAuthzCommittedImageAgainstDockerd(t *testing.T) {
	testenv.DockerHost(t) // root and a Docker Engine: skip, or fail under CI
	reg := testenv.Registry(t)
	dir := engineDir(t)
	engine := "unix://" + filepath.Join(dir, "docker.sock")
	repo := fmt.Sprintf("%s/authz/commit-%d", reg, time.Now().UnixNano())
	testimage.PushRelease(t, repo, "1.27.3", "2026-09-01", testimage.Options{Layer: testimage.Sleeper(t), Entrypoint: []string{testimage.SleeperPath}})
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
	eng := startEngine(t, dir, &Server{Enforcer: e, Host: "mesh", Engine: e.Hosts["mesh"].(Engine), Log: slog.New(slog.NewJSONHandler(&testenv.Buffer{}, nil))})
	docker := eng.docker
	t.Cleanup(func() {
		if eng.pluginUp() {
			for _, c := range []string{"forgejo", "old_forgejo"} {
				docker("rm", "-f", c)
			}
		}
	})
	compose := []string{"--label", ComposeProject + "=forge-stack", "--label", ComposeService + "=forgejo"}
	if out, err := docker(append(append([]string{"run", "-d", "--network", "none", "--name", "forgejo"}, compose...), repo+":1.27.3")...); err != nil {
		t.Fatalf("forgejo 1.27.3 refused: %v\n%s", err, out)
	}
	if out, err := docker("commit", "--change", "LABEL org.opencontainers.image.version=1.28.0", "forgejo", repo+":1.28.0"); err != nil {
		t.Fatalf("docker commit: %v\n%s", err, out)
	}
	if out, err := docker("rename", "forgejo", "old_forgejo"); err != nil {
		t.Fatalf("rename: %v\n%s", err, out)
	}
	out, err := docker(append(append([]string{"run", "-d", "--network", "none", "--name", "forgejo"}, compose...), repo+":1.28.0")...)
	if err == nil {
		t.Fatalf("the committed image was allowed:\n%s", out)
	}
	for _, want := range []string{`module "forge"`, "has no registry digest", "its tag and label are claims pin cannot check"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no semver version in its tag or label") {
		t.Errorf("the refusal says the committed image has no version:\n%s", out)
	}
	t.Logf("refusal:\n%s", out)
}
