//go:build linux

package docker

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestObserveStartTimes: with StartTimes, a container's start is the
// engine's own (docker inspect's State.StartedAt, to the second), on
// dockerd and on Podman; a restart by its restart policy (the process
// exited; the engine started it again) counts in RestartCount and moves
// StartedAt. Without StartTimes neither is read (resolve's requests stay).
func TestObserveStartTimes(t *testing.T) {
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
	ref := reg + "/started/" + id + ":1.0.0"
	testimage.Push(t, ref, sleeper(t, time.Time{}, map[string]string{"org.pin-tool.test": id}))
	ctx := context.Background()
	for _, e := range []struct {
		name string
		cli  *client.Client
		addr string
	}{{"dockerd", dcli, daddr}, {"podman", pcli, paddr}} {
		t.Run(e.name, func(t *testing.T) {
			pull(t, e.cli, ref)
			name := id + "-" + e.name
			c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: ref},
				&container.HostConfig{NetworkMode: "none", RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyAlways}}, nil, nil, name)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })
			if err := e.cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
				t.Fatal(err)
			}
			engineStart := func() (time.Time, int) {
				r, err := e.cli.ContainerInspect(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				st, err := host.ParseStartedAt(r.State.StartedAt)
				if err != nil || st.IsZero() {
					t.Fatalf("the engine's StartedAt %q: %v", r.State.StartedAt, err)
				}
				return st, r.RestartCount
			}
			observe := func(startTimes bool) host.Container {
				snap, err := Host{Name: e.name, Addr: e.addr, StartTimes: startTimes}.Observe(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := findContainer(snap, name)
				if !ok {
					t.Fatalf("%s not observed", name)
				}
				return got
			}
			first, _ := engineStart()
			got := observe(true)
			if d := got.StartedAt.Sub(first); d < -time.Second || d > time.Second || got.RestartCount != 0 {
				t.Errorf("StartedAt %v, the engine says %v; RestartCount %d", got.StartedAt, first, got.RestartCount)
			}
			if plain := observe(false); !plain.StartedAt.IsZero() || plain.RestartCount != 0 {
				t.Errorf("read without StartTimes: %v, %d", plain.StartedAt, plain.RestartCount)
			}

			// The process exits (SIGTERM: the sleeper ends); the restart
			// policy starts it again, and the engine counts it. dockerd
			// takes a kill through its API for a stop by hand (no
			// restart): the process is signalled from outside instead,
			// as a crash would end it. Podman restarts either way.
			time.Sleep(1100 * time.Millisecond) // a later second than the first start
			r, err := e.cli.ContainerInspect(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if e.name != "dockerd" || r.State == nil || syscall.Kill(r.State.Pid, syscall.SIGTERM) != nil {
				if err := e.cli.ContainerKill(ctx, c.ID, "SIGTERM"); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				st, n := engineStart()
				if n >= 1 && st.After(first) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the engine did not restart the container: RestartCount %d, StartedAt %v", n, st)
				}
				time.Sleep(200 * time.Millisecond)
			}
			again, restarts := engineStart()
			got = observe(true)
			if d := got.StartedAt.Sub(again); d < -time.Second || d > time.Second || got.RestartCount != restarts || !got.StartedAt.After(first) {
				t.Errorf("after a restart: StartedAt %v (engine %v, first %v), RestartCount %d (engine %d)", got.StartedAt, again, first, got.RestartCount, restarts)
			}
		})
	}
}
