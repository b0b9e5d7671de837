package docker

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/host"
)

// TestObserveStates: the engine's containers in every state that can be
// made on demand are observed with it, and keep it through both snapshot
// formats: a "docker inspect" array made of the engine's own inspect
// answers, and pin's JSON written and read back.
func TestObserveStates(t *testing.T) {
	t.Parallel()
	cli, addr := engine(t)
	id := unique(t)
	img := sleeper(t, time.Time{}, map[string]string{"org.pin-tool.test": id})
	ref := "pin.test/states/" + id + ":v1"
	load(t, cli, ref, img)
	ctx := context.Background()

	want := map[string]string{} // container ID → state
	want[run(t, cli, id+"-running", ref, nil, true)] = host.StateRunning
	want[run(t, cli, id+"-created", ref, nil, false)] = host.StateCreated
	exited := run(t, cli, id+"-exited", ref, nil, true)
	if err := cli.ContainerStop(ctx, exited, container.StopOptions{}); err != nil {
		t.Fatalf("stopping %s: %v", exited, err)
	}
	want[exited] = host.StateExited
	paused := run(t, cli, id+"-paused", ref, nil, true)
	if err := cli.ContainerPause(ctx, paused); err != nil {
		t.Fatalf("pausing %s: %v", paused, err)
	}
	t.Cleanup(func() { cli.ContainerUnpause(context.Background(), paused) })
	want[paused] = host.StatePaused

	// With start times: the inspect array below carries them.
	snap, err := Host{Name: "mesh-test", Addr: addr, StartTimes: true}.Observe(ctx)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	observed := ours(snap, want)
	for cid, state := range want {
		c, ok := observed[cid]
		if !ok {
			t.Errorf("container %s (%s) not observed", cid, state)
			continue
		}
		if c.State != state {
			t.Errorf("container %s: state %q, want %q", c.Name, c.State, state)
		}
		if c.NeverStarted() != (state == host.StateCreated) {
			t.Errorf("container %s (%s): NeverStarted = %v", c.Name, state, c.NeverStarted())
		}
	}

	// What "docker inspect $(docker ps -aq) $(docker images -q)" prints
	// for these containers and their image: the engine's answers, as they
	// come, in one array.
	var arr bytes.Buffer
	arr.WriteString("[")
	for cid := range want {
		_, raw, err := cli.ContainerInspectWithRaw(ctx, cid, false)
		if err != nil {
			t.Fatalf("inspecting %s: %v", cid, err)
		}
		arr.Write(raw)
		arr.WriteString(",\n")
	}
	_, raw, err := cli.ImageInspectWithRaw(ctx, configDigest(t, img))
	if err != nil {
		t.Fatalf("inspecting the image: %v", err)
	}
	arr.Write(raw)
	arr.WriteString("]")
	fromInspect, err := host.ParseSnapshot(arr.Bytes(), "mesh-test")
	if err != nil {
		t.Fatalf("reading the docker inspect array: %v", err)
	}
	if d := cmp.Diff(observed, ours(fromInspect, want)); d != "" {
		t.Errorf("docker inspect array against Observe (-observed +inspect):\n%s", d)
	}

	out, err := snap.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := host.ParseSnapshot(out, "mesh-test")
	if err != nil {
		t.Fatalf("reading pin's snapshot back: %v", err)
	}
	if d := cmp.Diff(observed, ours(back, want)); d != "" {
		t.Errorf("pin snapshot round trip (-observed +read back):\n%s", d)
	}
}

// ours picks the snapshot's containers whose IDs are keys of ids.
func ours(s *host.Snapshot, ids map[string]string) map[string]host.Container {
	out := map[string]host.Container{}
	for _, c := range s.Containers {
		if _, ok := ids[c.ID]; ok {
			out[c.ID] = c
		}
	}
	return out
}
