//go:build linux

package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// TestAuthzSideDoorsAgainstDockerd drives a dockerd of its own whose
// authorization plugin is pin, through the docker CLI and the Engine's API,
// by every side way to put an older image under module forge's name once
// forgejo (1.27.3, locked by pin resolve) is gone: the name with its
// leading "/", a container created under another name and renamed, the
// image given by its ID (full or short), an older image tagged locally as
// a newer tag, and, with --fail-open, create requests whose body the
// Engine does not pass to plugins (1 MiB or more, or not JSON, which this
// dockerd then refuses itself); then, in swarm mode, a service labelled
// for forge, created older, rolled back to an older spec that had no
// label, and updated to an older image while dropping the label.
// Each is denied with pin's words; the newer image runs.
func TestAuthzSideDoorsAgainstDockerd(t *testing.T) {
	testenv.DockerHost(t) // root and a Docker Engine: skip, or fail under CI
	reg := testenv.Registry(t)
	dir := engineDir(t)
	addr := "unix://" + filepath.Join(dir, "docker.sock")
	repo := fmt.Sprintf("%s/authz/side-%d", reg, time.Now().UnixNano())
	for _, v := range []struct{ tag, date string }{{"1.22.6", "2024-12-12"}, {"1.27.3", "2026-09-01"}, {"1.28.0", "2026-10-01"}} {
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
	logs := &testenv.Buffer{}
	server := func(failOpen bool) *Server {
		t.Helper()
		e, _, err := enforce.Load(catPath, lockPath, opts)
		if err != nil {
			t.Fatal(err)
		}
		return &Server{Enforcer: e, Host: "mesh", Engine: e.Hosts["mesh"].(Engine), FailOpen: failOpen, Log: slog.New(slog.NewJSONHandler(logs, nil))}
	}
	eng := startEngine(t, dir, server(false))
	docker := eng.docker
	t.Cleanup(func() {
		if eng.pluginUp() {
			for _, c := range []string{"forgejo", "tmp", "big", "plain"} {
				docker("rm", "-f", c)
			}
		}
	})
	denied := func(what, out string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: allowed, want a denial\n%s", what, out)
			return
		}
		for _, w := range append([]string{"authorization denied by plugin " + eng.plugin}, want...) {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q in:\n%s", what, w, out)
			}
		}
	}

	if out, err := docker("run", "-d", "--network", "none", "--name", "forgejo", repo+":1.27.3"); err != nil {
		t.Fatalf("forgejo 1.27.3: %v\n%s", err, out)
	}
	// pin resolve locks what runs; then forgejo is removed (a cutover in
	// progress): the lock is the floor.
	writeLock(t, catPath, lockPath, opts)
	eng.handler.s.Store(server(false))
	if out, err := docker("rm", "-f", "forgejo"); err != nil {
		t.Fatalf("rm: %v\n%s", err, out)
	}
	older := "older than what the previous lock names"

	out, err := docker("run", "-d", "--network", "none", "--name", "/forgejo", repo+":1.22.6")
	denied("run --name /forgejo, older", out, err, `pin: module "forge": refusing a downgrade`, older)

	if out, err := docker("create", "--network", "none", "--name", "tmp", repo+":1.22.6"); err != nil {
		t.Fatalf("create tmp (no module's name): %v\n%s", err, out)
	}
	out, err = docker("rename", "tmp", "forgejo")
	denied("rename tmp forgejo", out, err, "renaming container tmp to forgejo puts its image under module \"forge\"'s name", "refusing a downgrade", older)

	id, err := docker("image", "inspect", "--format", "{{.ID}}", repo+":1.22.6")
	if err != nil {
		t.Fatalf("image inspect: %v\n%s", err, id)
	}
	id = strings.TrimSpace(id)
	for _, ref := range []string{id, id[:19]} {
		out, err = docker("run", "-d", "--network", "none", "--name", "forgejo", ref)
		denied("run by image ID "+ref, out, err, "refusing a downgrade", "version 1.22.6 < 1.27.3")
	}
	out, err = docker("run", "-d", "--network", "none", "--name", "forgejo", "sha256:"+strings.Repeat("0", 12))
	denied("run by an unknown image ID", out, err, "the Engine holds no image sha256:000000000000")

	// docker tag moves repo:1.28.0 to the 1.22.6 image on this Engine: the
	// registry's 1.28.0 is newer, what would run is not.
	if out, err := docker("tag", repo+":1.22.6", repo+":1.28.0"); err != nil {
		t.Fatalf("tag: %v\n%s", err, out)
	}
	out, err = docker("run", "-d", "--network", "none", "--name", "forgejo", repo+":1.28.0")
	denied("run an older image tagged 1.28.0 locally", out, err, "the tag says 1.28.0, the label says 1.22.6")
	if out, err := docker("pull", repo+":1.28.0"); err != nil {
		t.Fatalf("pull: %v\n%s", err, out)
	}

	// The create requests a client can make whose body the Engine keeps
	// from its plugins: with --fail-open too, a covered name is denied.
	eng.handler.s.Store(server(true))
	api := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(dir, "docker.sock"))
	}}}
	create := func(name, contentType string, body []byte, chunked bool) (int, string) {
		t.Helper()
		var r io.Reader = strings.NewReader(string(body))
		if chunked {
			r = io.MultiReader(r) // of unknown length: sent chunked
		}
		req, _ := http.NewRequest("POST", "http://docker/v1.41/containers/create?name="+name, r)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := api.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	plain, _ := json.Marshal(map[string]any{"Image": repo + ":1.22.6"})
	big, _ := json.Marshal(map[string]any{"Image": repo + ":1.22.6", "Labels": map[string]string{"big": strings.Repeat("x", 1<<20)}})
	hiddenBody := []string{"passed pin no body", `which module \"forge\" covers`, "with or without --fail-open"}
	for _, c := range []struct {
		what, contentType string
		body              []byte
		chunked           bool
		want              []string
	}{
		{"1 MiB of labels", "application/json", big, false, hiddenBody},
		{"1 MiB of labels, chunked", "application/json", big, true, hiddenBody},
		// dockerd refuses these itself (HTTP 400), after its plugins.
		{"no content type", "", plain, false, hiddenBody},
		{"text/plain", "text/plain", plain, false, hiddenBody},
		// Passed to the plugin, so judged.
		{"JSON sent chunked", "application/json", plain, true, []string{"refusing a downgrade"}},
		{"JSON", "application/json", plain, false, []string{"refusing a downgrade"}},
	} {
		code, msg := create("forgejo", c.contentType, c.body, c.chunked)
		if code != http.StatusForbidden {
			t.Errorf("fail open, %s: HTTP %d %s", c.what, code, msg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("fail open, %s: want %q in %s", c.what, w, msg)
			}
		}
	}

	out, err = docker("run", "-d", "--network", "none", "--name", "/forgejo", repo+":1.28.0")
	if err != nil {
		t.Errorf("run --name /forgejo, newer: %v\n%s", err, out)
	}

	// Swarm: a service whose tasks carry forge's label (no replicas: the
	// calls are what is judged).
	eng.handler.s.Store(server(false))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if out, err := docker("swarm", "init", "--advertise-addr", fmt.Sprintf("127.0.0.1:%d", port), "--listen-addr", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("swarm init: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if eng.pluginUp() {
			docker("swarm", "leave", "--force")
		}
	})
	service := func(args ...string) (string, error) { return docker(append([]string{"service"}, args...)...) }
	out, err = service("create", "--detach", "--replicas", "0", "--name", "web", "--container-label", "pin.module=forge", repo+":1.22.6")
	denied("service create, labelled, older", out, err, "service web: module \"forge\": refusing a downgrade")
	if out, err := service("create", "--detach", "--replicas", "0", "--name", "web", repo+":1.22.6"); err != nil {
		t.Fatalf("service create, not labelled: %v\n%s", err, out)
	}
	if out, err := service("update", "--detach", "--image", repo+":1.28.0", "--container-label-add", "pin.module=forge", "web"); err != nil {
		t.Fatalf("service update, newer, labelled: %v\n%s", err, out)
	}
	out, err = service("rollback", "--detach", "web")
	denied("service rollback to the older spec", out, err, "refusing a downgrade")
	out, err = service("update", "--detach", "--image", repo+":1.22.6", "--container-label-rm", "pin.module", "web")
	denied("service update to older, dropping the label", out, err, "refusing a downgrade")
	if out, err := service("update", "--detach", "--image", repo+":1.22.6", "--container-label-add", enforce.AllowDowngradeKey+"=rollback drill", "web"); err != nil {
		t.Errorf("service update to older, with the reason: %v\n%s", err, out)
	}
	if l := logs.String(); !strings.Contains(l, `"msg":"containers/rename"`) || !strings.Contains(l, `"msg":"containers/create refused unread"`) ||
		!strings.Contains(l, `"msg":"services/update"`) {
		t.Errorf("decisions not logged:\n%s", l)
	}
}

// writeLock runs pin resolve's pipeline and writes the lock it decides.
func writeLock(t *testing.T, catPath, lockPath string, opts source.Options) {
	t.Helper()
	ctx := context.Background()
	in, _, err := source.Load(ctx, source.Request{Catalogue: catPath, Lock: lockPath, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	plan := resolve.Resolve(ctx, resolve.Input{Catalogue: in.Catalogue, Old: in.Lock, Observed: in.Observed, Registry: in.Registries.For, Now: time.Now()})
	if plan.Refused() || plan.Failed() {
		t.Fatalf("resolve: %+v", plan)
	}
	if _, err := lock.WriteFile(lockPath, lock.Format(plan.Lock())); err != nil {
		t.Fatal(err)
	}
}
