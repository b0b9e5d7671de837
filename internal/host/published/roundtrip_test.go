package published_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/host/published"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
)

// TestPublishedIsWhatWasRead: floors from a published observation count
// exactly as live ones only if what a reader gets back is what the host's
// read said, field for field: every container whatever its state (created,
// paused, restarting, exited, a pod's waiting one, scaled to zero), its
// labels, start and restarts, every image with its tags, digests, labels,
// platform and creation time to the nanosecond (dates order images). The
// oracle is the generated snapshot itself; 300 of them, each written
// signed to a file and read back through a published.Host.
func TestPublishedIsWhatWasRead(t *testing.T) {
	k := verifytest.NewKey(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(33, 2026))
	for n := range 300 {
		name := fmt.Sprintf("edge-%d", n)
		want := randomSnapshot(rng, name)
		o := &published.Observation{Host: name, Platform: "linux/arm64/v8", ReadAt: readAt, Snapshot: want}
		path := filepath.Join(dir, name+".json")
		if err := published.WriteFile(path, o, signer(t, k), false); err != nil {
			t.Fatalf("snapshot %d: %v", n, err)
		}
		got, err := fileHost(name, path, k, readAt.Add(time.Minute)).Observe(context.Background())
		if err != nil {
			t.Fatalf("snapshot %d: %v", n, err)
		}
		want.Normalise()
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("snapshot %d: read back (-what the host's read said +what the reader got):\n%s", n, d)
		}
	}
}

func randomSnapshot(rng *rand.Rand, name string) *host.Snapshot {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	digest := func() string { return fmt.Sprintf("sha256:%064x", rng.Uint64()) }
	when := func() time.Time {
		return time.Date(2020+rng.IntN(7), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e9), time.UTC)
	}
	labels := func() map[string]string {
		m := map[string]string{}
		for range rng.IntN(4) {
			m[pick("org.opencontainers.image.version", "org.opencontainers.image.created", "pin.dev/module", "com.example/ünïcode key")] = pick("1.27.3", "v2", "", "2026-09-01T00:00:00Z", "läbel \"quoted\"\n")
		}
		return m
	}
	s := &host.Snapshot{Schema: host.SnapshotSchema, Host: name, ImageStore: pick("classic", "containerd")}
	var ids []string
	for range rng.IntN(5) {
		id := digest()
		ids = append(ids, id)
		img := host.Image{ID: id, Created: when(), Labels: labels()}
		for range rng.IntN(3) {
			img.RepoTags = append(img.RepoTags, pick("registry.example.org/forge/forgejo", "docker.io/library/postgres")+":"+pick("1.27.3", "latest", "16-alpine"))
		}
		for range rng.IntN(3) {
			img.RepoDigests = append(img.RepoDigests, "registry.example.org/forge/forgejo@"+digest())
		}
		if rng.IntN(4) > 0 {
			img.OS, img.Arch, img.Variant = "linux", pick("amd64", "arm64", "arm"), pick("", "v7", "v8")
		}
		s.Images = append(s.Images, img)
	}
	for i := range rng.IntN(6) {
		c := host.Container{
			ID:     fmt.Sprintf("%012x", rng.Uint64()),
			Name:   pick("forgejo", "db", "old-forgejo", "worker") + fmt.Sprint(i),
			State:  pick(host.StateCreated, host.StateRunning, host.StatePaused, host.StateRestarting, host.StateExited, host.StateRemoving, "waiting: CrashLoopBackOff", host.StateScaledToZero),
			Labels: labels(),
		}
		switch {
		case len(ids) > 0 && rng.IntN(5) > 0:
			c.ImageID = ids[rng.IntN(len(ids))]
			c.Image = pick("registry.example.org/forge/forgejo:1.27.3", c.ImageID, "forgejo@"+digest())
		default: // its image gone from the host
			c.ImageID = digest()
			c.Image = c.ImageID
		}
		if rng.IntN(3) == 0 {
			c.Workload, c.Pod = pick("deployment/forgejo", "statefulset/db", "pod/debug"), fmt.Sprintf("forgejo-%x", rng.Uint32())
		}
		if rng.IntN(2) == 0 {
			c.StartedAt, c.RestartCount = when(), rng.IntN(4)
		}
		s.Containers = append(s.Containers, c)
	}
	return s
}

// FuzzParse: whatever bytes arrive where an observation is published,
// Parse never panics, and what it accepts writes back to what reads the
// same (a reader and a publisher agree on every observation there is).
//
//	go test -run XXX -fuzz FuzzParse ./internal/host/published
func FuzzParse(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 8 {
		o := &published.Observation{Host: "edge", Platform: "linux/amd64", ReadAt: readAt, Snapshot: randomSnapshot(rng, "edge")}
		if n == 0 {
			o = observation("edge", readAt)
		}
		b, err := o.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"pin_observation":1,"host":"edge","read_at":"2026-09-17T10:00:00Z","snapshot":[]}`))
	f.Add([]byte(`[{"Id":"c1","Name":"/forgejo","Config":{"Image":"forgejo:1"},"State":{"Status":"running"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := published.Parse(data)
		if err != nil {
			return
		}
		b, err := o.Marshal()
		if err != nil {
			t.Fatalf("parsed, then cannot be written: %v", err)
		}
		again, err := published.Parse(b)
		if err != nil {
			t.Fatalf("written, then refused: %v\n%s", err, b)
		}
		if d := cmp.Diff(o, again, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("written and read again (-first +again):\n%s", d)
		}
	})
}
