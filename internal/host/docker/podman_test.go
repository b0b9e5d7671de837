package docker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestObservePodman runs the same images on dockerd and on Podman's
// Docker-compatible API, pulled from the same registry, and reads both:
// what pin keeps of containers and images is equal (image IDs are the
// config digest on both, RepoDigests repo@sha256:<manifest>), and where
// Podman answers differently (docs/reference.md) the test shows it.
func TestObservePodman(t *testing.T) {
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
	created := time.Date(2026, 10, 2, 7, 0, 0, 0, time.UTC)
	labels := map[string]string{"org.opencontainers.image.version": "2.4.1", "org.pin-tool.test": id}
	img := sleeper(t, created, labels)
	ref := reg + "/podman/" + id + ":2.4.1"
	dig := testimage.Push(t, ref, img)
	// Pulled by digest alone, with no created time: where they differ.
	bare := sleeper(t, time.Time{}, map[string]string{"org.pin-tool.test": id + "-bare"})
	bdig := testimage.Push(t, reg+"/podman/"+id+"-bare:v1", bare)
	bref := reg + "/podman/" + id + "-bare@" + bdig.DigestStr()

	snaps := map[string]*host.Snapshot{}
	for _, e := range []struct {
		name string
		cli  *client.Client
		addr string
	}{{"dockerd", dcli, daddr}, {"podman", pcli, paddr}} {
		pull(t, e.cli, ref)
		pull(t, e.cli, bref)
		run(t, e.cli, id+"-web", ref, map[string]string{"pin.module": id + "-web"}, true) // unique: the Compose example has a module "web"
		run(t, e.cli, id+"-bare", bref, nil, false)
		snap, err := Host{Name: e.name, Addr: e.addr}.Observe(context.Background())
		if err != nil {
			t.Fatalf("Observe %s: %v", e.name, err)
		}
		snaps[e.name] = snap
	}

	imgID, bareID := configDigest(t, img), configDigest(t, bare)
	for _, name := range []string{id + "-web", id + "-bare"} {
		d, ok1 := findContainer(snaps["dockerd"], name)
		p, ok2 := findContainer(snaps["podman"], name)
		if !ok1 || !ok2 {
			t.Fatalf("container %s observed on dockerd %v, on podman %v", name, ok1, ok2)
		}
		d.ID, p.ID = "", "" // each engine makes its own
		if diff := cmp.Diff(d, p); diff != "" {
			t.Errorf("container %s, dockerd (-) and podman (+):\n%s", name, diff)
		}
	}
	if c, _ := findContainer(snaps["podman"], id+"-web"); c.Image != ref || c.ImageID != imgID || c.State != host.StateRunning {
		t.Errorf("podman container = %+v, want image %s, ID %s, running", c, ref, imgID)
	}

	// The tagged image: equal in all that pin reads.
	d, _ := snaps["dockerd"].Image(imgID)
	p, ok := snaps["podman"].Image(imgID)
	if !ok {
		t.Fatalf("podman: image %s (the config digest, as dockerd) not observed; images: %+v", imgID, snaps["podman"].Images)
	}
	if diff := cmp.Diff(d, p); diff != "" {
		t.Errorf("image %s, dockerd (-) and podman (+):\n%s", imgID, diff)
	}
	if !slices.Contains(p.RepoDigests, dig.String()) || !p.Created.Equal(created) {
		t.Errorf("podman image: RepoDigests %v, Created %v; want %s among them, %v", p.RepoDigests, p.Created, dig, created)
	}

	// The image pulled by digest, with no created time: Podman shows the
	// time of the pull (dockerd: zero, 0001-01-01). Tags, digests and
	// labels agree: no tag on either (Podman 4.3.1 through the Docker API;
	// an image Podman pulled itself may list "repo@sha256:…" as a tag,
	// which pin does not read: resolve uses a container's reference and
	// the image's RepoDigests).
	d, _ = snaps["dockerd"].Image(bareID)
	p, ok = snaps["podman"].Image(bareID)
	if !ok {
		t.Fatalf("podman: image %s not observed", bareID)
	}
	if len(d.RepoTags) != 0 || len(p.RepoTags) != 0 {
		t.Errorf("RepoTags of an image pulled by digest: dockerd %v, podman %v; want none on either", d.RepoTags, p.RepoTags)
	}
	if !d.Created.IsZero() && !d.Created.Equal(time.Time{}.UTC()) {
		t.Errorf("dockerd Created of an image with none = %v, want zero", d.Created)
	}
	if p.Created.Before(time.Now().Add(-time.Hour)) {
		t.Errorf("podman Created of an image with none = %v, want the pull time", p.Created)
	}
	if !slices.Equal(d.RepoDigests, p.RepoDigests) || !cmp.Equal(d.Labels, p.Labels) {
		t.Errorf("image pulled by digest: RepoDigests %v / %v, labels %v / %v; want equal", d.RepoDigests, p.RepoDigests, d.Labels, p.Labels)
	}
}
