package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// runFixture is module forge, locked at 1.0 (d1), running on host dock
// the image whose digest is running, and an env file to export it to.
func runFixture(t *testing.T, running string) (resolve.Input, Request, string) {
	t.Helper()
	cat, diags := catalogue.Parse(catalogue.Source{Filename: "c.hcl", Bytes: []byte(`
host "dock" {}
host "idle" {}
module "forge" {
  image  = "reg.example/forge"
  policy = "at-least-running"
  runs_on "dock" { container = "forge" }
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	lk := &lock.Lock{Modules: []*lock.Module{{Name: "forge", Image: "reg.example/forge", Tag: "1.0", Digest: d1}}}
	tag := map[string]string{d1: "1.0", d2: "2.0"}[running]
	id := "sha256:" + strings.Repeat("a", 64)
	snap := &host.Snapshot{Host: "dock",
		Containers: []host.Container{{ID: "c1", Name: "forge", Image: "reg.example/forge:" + tag, ImageID: id, State: host.StateRunning}},
		Images: []host.Image{{ID: id, RepoTags: []string{"reg.example/forge:" + tag}, RepoDigests: []string{"reg.example/forge@" + running},
			Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), OS: "linux", Arch: "amd64"}}}
	in := resolve.Input{Catalogue: cat, Old: lk, Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
		Observed: observe.Observed{Snapshots: map[string]*host.Snapshot{"dock": snap}, Errors: map[string]error{"idle": errors.New("not asked")}}}
	env := filepath.Join(t.TempDir(), "deploy.env")
	return in, Request{Exports: catalogue.Export{Env: []string{env}}}, env
}

// TestRunWritesWhatTheGatePasses: the lock of what runs is written; with
// --check nothing is, and the report says the file would change.
func TestRunWritesWhatTheGatePasses(t *testing.T) {
	in, req, env := runFixture(t, d1)
	rep, err := Run(context.Background(), in, req, Options{Check: true})
	if err != nil || rep.Written || len(rep.Files) != 1 || !rep.Files[0].Changed() {
		t.Fatalf("check: report %+v, error %v", rep, err)
	}
	if _, err := os.Stat(env); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("--check wrote %s", env)
	}
	rep, err = Run(context.Background(), in, req, Options{})
	if err != nil || !rep.Written || len(rep.Unsafe) != 0 {
		t.Fatalf("report %+v, error %v", rep, err)
	}
	if b, _ := os.ReadFile(env); !strings.Contains(string(b), "FORGE_IMAGE=reg.example/forge:1.0@"+d1) {
		t.Errorf("%s holds:\n%s", env, b)
	}
}

// TestRunRefusesADowngrade: a host that runs 2.0 where the lock names 1.0
// is the floor guarantee's refusal: the cutover is reported, nothing is
// written; a host the exported module runs on that could not be read is a
// *HostError, while one it does not run on is not asked about.
func TestRunRefusesADowngrade(t *testing.T) {
	in, req, env := runFixture(t, d2)
	rep, err := Run(context.Background(), in, req, Options{})
	if err != nil || rep == nil || len(rep.Unsafe) != 1 || rep.Written {
		t.Fatalf("report %+v, error %v", rep, err)
	}
	if c := rep.Unsafe[0]; c.Module != "forge" || c.Observation.Host != "dock" || c.Safe() {
		t.Errorf("unsafe cutover %+v", c)
	}
	if _, err := os.Stat(env); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused export wrote %s", env)
	}
	in.Observed.Errors["dock"] = errors.New("connection refused")
	var he *HostError
	if _, err := Run(context.Background(), in, req, Options{}); !errors.As(err, &he) || he.Host != "dock" {
		t.Errorf("host down: error %v, want a *HostError of dock", err)
	}
}
