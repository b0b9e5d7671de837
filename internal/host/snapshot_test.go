package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseDockerInspect(t *testing.T) {
	data, err := os.ReadFile("testdata/docker-inspect.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSnapshot(data, "mesh-1")
	if err != nil {
		t.Fatal(err)
	}
	want := &Snapshot{
		Schema: SnapshotSchema, Host: "mesh-1",
		Containers: []Container{
			{ID: "4f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8", Name: "forgejo", Image: "registry.example.org/forge/forgejo:1.27.3",
				ImageID: "sha256:6cbb535b5a40061079c813a8399c40125e49d8b0da3917fd1585af7671115565", State: "running", Labels: map[string]string{"pin.module": "forge"}},
			{ID: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d", Name: "old-job", Image: "registry.example.org/jobs/cron:2.0",
				ImageID: "sha256:1111111111111111111111111111111111111111111111111111111111111111", State: "exited"},
		},
		Images: []Image{
			{ID: "sha256:1111111111111111111111111111111111111111111111111111111111111111", RepoTags: []string{"registry.example.org/jobs/cron:2.0"}, RepoDigests: []string{},
				Created: time.Unix(0, 0).UTC(), OS: "linux", Arch: "amd64"},
			{ID: "sha256:6cbb535b5a40061079c813a8399c40125e49d8b0da3917fd1585af7671115565", RepoTags: []string{"registry.example.org/forge/forgejo:1.27.3"},
				RepoDigests: []string{"registry.example.org/forge/forgejo@sha256:fe63af8ae93decbf99e452febf938935c4a9782c1cf78c9f43311b3afdc7b6e3"},
				Created:     time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), Labels: map[string]string{"org.opencontainers.image.version": "1.27.3"}, OS: "linux", Arch: "arm64", Variant: "v8"},
		},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if p := s.Images[1].Platform(); p != "linux/arm64/v8" {
		t.Errorf("platform = %q", p)
	}
	if s.Containers[0].Running() != true || s.Containers[1].Running() {
		t.Error("running state wrong")
	}
}

// TestSnapshotRoundTrip: pin's own format reads back to what was written,
// and writing is deterministic.
func TestSnapshotRoundTrip(t *testing.T) {
	data, _ := os.ReadFile("testdata/docker-inspect.json")
	s, err := ParseSnapshot(data, "mesh-1")
	if err != nil {
		t.Fatal(err)
	}
	s.ImageStore = "classic"
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mesh-1.json")
	os.WriteFile(path, out, 0o644)
	back, err := SnapshotFile{HostName: "mesh-1", Path: path}.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.Marshal()
	if string(again) != string(out) {
		t.Errorf("snapshot did not round-trip:\n%s", cmp.Diff(string(out), string(again)))
	}
}

func TestParseSnapshotErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"empty", "", "snapshot is empty"},
		{"not json", "{nope", "reading pin snapshot"},
		{"future schema", `{"schema": 2, "host": "x", "containers": [], "images": []}`, "schema 2 is not supported"},
		{"unknown field", `{"schema": 1, "host": "x", "containers": [], "images": [], "extra": 1}`, "unknown field"},
		{"container without image", `{"schema": 1, "host": "x", "containers": [{"name": "a", "state": "running"}], "images": []}`, "needs a name, an image_id and a state"},
		{"container without state", `{"schema": 1, "host": "x", "containers": [{"name": "a", "image_id": "sha256:1"}], "images": []}`, "needs a name, an image_id and a state"},
		{"inspect container without state", `[{"Id": "c", "Name": "/a", "Image": "sha256:1", "State": {}}]`, "needs a name, an image_id and a state"},
		{"data after the object", `{"schema": 1, "host": "x", "containers": [], "images": []} {}`, "data after the snapshot's object"},
		{"inspect entry of neither kind", `[{"Foo": 1}]`, "neither a container nor an image"},
		{"inspect bad date", `[{"Id": "sha256:1", "RepoTags": [], "Created": "yesterday"}]`, "created \"yesterday\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSnapshot([]byte(tt.data), "x")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
			var se *SnapshotError
			if !errors.As(err, &se) || !errors.Is(err, ErrBadSnapshot) {
				t.Errorf("err = %#v, want a *SnapshotError that is ErrBadSnapshot", err)
			}
		})
	}
}

func FuzzParseSnapshot(f *testing.F) {
	data, _ := os.ReadFile("testdata/docker-inspect.json")
	f.Add(data)
	own, _ := os.ReadFile("../../examples/incident/mesh-1.json")
	f.Add(own)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSnapshot(data, "fuzz")
		if err != nil {
			return
		}
		// Whatever reads, writes and reads back the same.
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseSnapshot(out, "fuzz")
		if err != nil {
			t.Fatalf("written snapshot does not read: %v\n%s", err, out)
		}
		again, _ := back.Marshal()
		if string(again) != string(out) {
			t.Fatalf("not a fixed point:\n%s", cmp.Diff(string(out), string(again)))
		}
	})
}

// TestContainerStates: every engine state reads from both formats and
// survives pin's own; only "created" is never started, and only running,
// paused and restarting run.
func TestContainerStates(t *testing.T) {
	for _, tc := range []struct {
		state                 string
		running, neverStarted bool
	}{
		{StateCreated, false, true},
		{StateRunning, true, false},
		{StatePaused, true, false},
		{StateRestarting, true, false},
		{StateExited, false, false},
		{StateRemoving, false, false},
		{StateDead, false, false},
		{"waiting: ContainerCreating", false, false}, // a Kubernetes host's word
	} {
		t.Run(tc.state, func(t *testing.T) {
			inspect := fmt.Sprintf(`[{"Id": "c1", "Name": "/web", "Image": "sha256:1", "State": {"Status": %q},
				"Config": {"Image": "r.example/web:1.22"}}]`, tc.state)
			s, err := ParseSnapshot([]byte(inspect), "h")
			if err != nil {
				t.Fatal(err)
			}
			want := Container{ID: "c1", Name: "web", Image: "r.example/web:1.22", ImageID: "sha256:1", State: tc.state}
			if d := cmp.Diff([]Container{want}, s.Containers); d != "" {
				t.Fatalf("from docker inspect (-want +got):\n%s", d)
			}
			out, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), fmt.Sprintf(`"state": %q`, tc.state)) {
				t.Errorf("pin snapshot lacks the state:\n%s", out)
			}
			back, err := ParseSnapshot(out, "h")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]Container{want}, back.Containers); d != "" {
				t.Fatalf("pin snapshot round trip (-want +got):\n%s", d)
			}
			c := back.Containers[0]
			if c.Running() != tc.running || c.NeverStarted() != tc.neverStarted {
				t.Errorf("Running, NeverStarted = %v, %v; want %v, %v", c.Running(), c.NeverStarted(), tc.running, tc.neverStarted)
			}
		})
	}
}
