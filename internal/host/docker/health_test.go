//go:build linux

package docker

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestObserveHealth: on dockerd and on Podman, with StartTimes, pin reads
// what the engine reports of real containers' health: one whose health
// check passes is healthy, one whose check fails is unhealthy, one that
// exited non-zero carries its exit code and end, and one that restarts
// under --restart=on-failure carries its restarts and last exit code.
// Without StartTimes none of it is read.
func TestObserveHealth(t *testing.T) {
	t.Parallel()
	reg := testenv.Registry(t)
	paddr := testenv.PodmanHost(t)
	dcli, daddr := engine(t)
	pcli, err := client.NewClientWithOpts(client.WithHost(paddr), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pcli.Close() })
	id := unique(t)
	ref := reg + "/health/" + id + ":1.0.0"
	testimage.Push(t, ref, testimage.Build(t, testimage.Options{Layer: testimage.Prober(t), Entrypoint: []string{testimage.ProberPath},
		Labels: map[string]string{"org.pin-tool.test": id}}))
	ctx := context.Background()
	check := func(verdict string) *container.HealthConfig {
		return &container.HealthConfig{Test: []string{"CMD", testimage.ProberPath, verdict}, Interval: 500 * time.Millisecond,
			Timeout: 5 * time.Second, Retries: 1, StartPeriod: 0}
	}
	for _, e := range []struct {
		name string
		cli  *client.Client
		addr string
	}{{"dockerd", dcli, daddr}, {"podman", pcli, paddr}} {
		t.Run(e.name, func(t *testing.T) {
			pull(t, e.cli, ref)
			start := func(name string, cmd []string, hc *container.HealthConfig, restart container.RestartPolicy) string {
				t.Helper()
				c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: ref, Cmd: cmd, Healthcheck: hc},
					&container.HostConfig{NetworkMode: "none", RestartPolicy: restart}, nil, nil, id+"-"+e.name+"-"+name)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })
				if err := e.cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
					t.Fatal(err)
				}
				return c.ID
			}
			healthy := start("healthy", []string{"sleep"}, check("pass"), container.RestartPolicy{})
			sick := start("unhealthy", []string{"sleep"}, check("fail"), container.RestartPolicy{})
			exited := start("exited", []string{"exit", "3"}, nil, container.RestartPolicy{})
			looping := start("restarting", []string{"exit", "1"}, nil, container.RestartPolicy{Name: container.RestartPolicyOnFailure})

			// Wait for the engine to say what the test expects of each,
			// running Podman's checks by hand where no systemd timer runs
			// them.
			deadline := time.Now().Add(60 * time.Second)
			for {
				ok := true
				for _, w := range []struct {
					id   string
					done func(container.InspectResponse) bool
				}{
					{healthy, func(r container.InspectResponse) bool {
						return r.State.Health != nil && r.State.Health.Status == "healthy"
					}},
					{sick, func(r container.InspectResponse) bool {
						return r.State.Health != nil && r.State.Health.Status == "unhealthy"
					}},
					{exited, func(r container.InspectResponse) bool { return r.State.Status == "exited" }},
					{looping, func(r container.InspectResponse) bool { return r.RestartCount >= 1 }},
				} {
					r, err := e.cli.ContainerInspect(ctx, w.id)
					if err != nil {
						t.Fatal(err)
					}
					if !w.done(r) {
						ok = false
						if e.name == "podman" && r.State.Health != nil {
							runPodmanCheck(t, e.addr, w.id)
						}
					}
				}
				if ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the engine did not report the containers' health in time")
				}
				time.Sleep(300 * time.Millisecond)
			}

			observe := func(startTimes bool) map[string]host.Container {
				snap, err := Host{Name: e.name, Addr: e.addr, StartTimes: startTimes}.Observe(ctx)
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]host.Container{}
				for _, c := range snap.Containers {
					if name, ok := strings.CutPrefix(c.Name, id+"-"+e.name+"-"); ok {
						out[name] = c
					}
				}
				return out
			}
			got := observe(true)
			if c := got["healthy"]; c.State != host.StateRunning || c.Check != host.HealthHealthy || c.Since.IsZero() {
				t.Errorf("healthy: %+v", c)
			}
			if c := got["unhealthy"]; c.State != host.StateRunning || c.Check != host.HealthUnhealthy || c.Since.IsZero() {
				t.Errorf("unhealthy: %+v", c)
			}
			if c := got["exited"]; c.State != host.StateExited || c.ExitCode != 3 || c.FinishedAt.IsZero() || c.Check != "" {
				t.Errorf("exited: %+v", c)
			}
			c := got["restarting"]
			if c.RestartCount < 1 {
				t.Errorf("restarting: %+v", c)
			}
			if c.State != host.StateRunning && (c.ExitCode != 1 || c.FinishedAt.IsZero()) {
				t.Errorf("restarting, between runs: %+v", c)
			}
			for name, c := range observe(false) {
				if c.Health != (host.Health{}) {
					t.Errorf("%s read without StartTimes: %+v", name, c.Health)
				}
			}
		})
	}
}

// runPodmanCheck runs a container's health check once through Podman's
// own API (GET /libpod/containers/{id}/healthcheck): without systemd,
// nothing runs it on a timer.
func runPodmanCheck(t *testing.T, addr, id string) {
	t.Helper()
	sock, ok := strings.CutPrefix(addr, "unix://")
	if !ok {
		t.Fatalf("Podman's address %s is not a unix socket", addr)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}, Timeout: 30 * time.Second}
	resp, err := hc.Get("http://podman/v4.0.0/libpod/containers/" + id + "/healthcheck")
	if err != nil {
		t.Fatalf("running Podman's health check: %v", err)
	}
	resp.Body.Close()
}
