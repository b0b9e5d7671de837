package published_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/host/published"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
)

// readAt is when the test hosts were read.
var readAt = time.Date(2026, 9, 17, 10, 0, 0, 0, time.UTC)

// snapshot is what host name runs: a running and a stopped container, so
// that a reader that dropped stopped ones would be seen.
func snapshot(name string) *host.Snapshot {
	return &host.Snapshot{
		Schema: host.SnapshotSchema, Host: name, ImageStore: "classic",
		Containers: []host.Container{
			{ID: "c1", Name: "forgejo", Image: "registry.example.org/forge/forgejo:1.27.3", ImageID: "sha256:" + strings.Repeat("a", 64), State: host.StateRunning},
			{ID: "c2", Name: "old-forgejo", Image: "registry.example.org/forge/forgejo:1.27.4", ImageID: "sha256:" + strings.Repeat("b", 64), State: host.StateExited},
		},
		Images: []host.Image{
			{ID: "sha256:" + strings.Repeat("a", 64), RepoTags: []string{"registry.example.org/forge/forgejo:1.27.3"}, Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), OS: "linux", Arch: "amd64"},
		},
	}
}

func observation(name string, at time.Time) *published.Observation {
	return &published.Observation{Host: name, Platform: "linux/amd64", ReadAt: at, Snapshot: snapshot(name)}
}

func signer(t *testing.T, k verifytest.Key) *published.Signer {
	t.Helper()
	s, err := published.NewSigner(k.Priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMarshalRoundTripIsDeterministic(t *testing.T) {
	o := observation("mesh-1", readAt.Add(123*time.Millisecond))
	a, err := o.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// The same state, its slices in another order: the same bytes.
	o2 := observation("mesh-1", readAt)
	o2.Snapshot.Containers[0], o2.Snapshot.Containers[1] = o2.Snapshot.Containers[1], o2.Snapshot.Containers[0]
	b, err := o2.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("same state, other bytes:\n%s\n%s", a, b)
	}
	got, err := published.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	want := observation("mesh-1", readAt)
	want.Snapshot.Normalise()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if len(got.Snapshot.Containers) != 2 {
		t.Fatalf("the stopped container was lost: %+v", got.Snapshot.Containers)
	}
}

// publishFile writes host name's observation, read at `at`, into dir,
// signed with k.
func publishFile(t *testing.T, dir, name string, at time.Time, k verifytest.Key) string {
	t.Helper()
	path := filepath.Join(dir, name+".json")
	if err := published.WriteFile(path, observation(name, at), signer(t, k), false); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileHost(name, location string, k verifytest.Key, now time.Time) *published.Host {
	return &published.Host{Name: name, Location: location, Trust: verify.Spec{Keys: []string{k.Path}},
		MaxAge: time.Hour, Now: func() time.Time { return now }}
}

func TestFileReadsWhatWasSigned(t *testing.T) {
	k := verifytest.NewKey(t)
	dir := t.TempDir()
	path := publishFile(t, dir, "mesh-1", readAt, k)
	for _, loc := range []string{path, dir} {
		s, err := fileHost("mesh-1", loc, k, readAt.Add(10*time.Minute)).Observe(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
		want := snapshot("mesh-1")
		want.Normalise()
		if d := cmp.Diff(want, s); d != "" {
			t.Fatalf("%s (-want +got):\n%s", loc, d)
		}
	}
}

// TestFileRefusals: each way an observation file must not count is
// refused with its reason, never read as a host that runs nothing.
func TestFileRefusals(t *testing.T) {
	k, other := verifytest.NewKey(t), verifytest.NewKey(t)
	now := readAt.Add(10 * time.Minute)
	cases := []struct {
		name    string
		prepare func(t *testing.T, dir string) (location string)
		want    published.Reason
		detail  string
	}{
		{"missing", func(t *testing.T, dir string) string { return filepath.Join(dir, "mesh-1.json") }, published.NotPublished, "no such file"},
		{"unsigned", func(t *testing.T, dir string) string {
			p := publishFile(t, dir, "mesh-1", readAt, k)
			os.Remove(published.SignatureFile(p))
			return p
		}, published.Unsigned, ".sig beside it"},
		{"wrong key", func(t *testing.T, dir string) string { return publishFile(t, dir, "mesh-1", readAt, other) }, published.WrongSigner, "none of the 1 configured key"},
		{"tampered", func(t *testing.T, dir string) string {
			p := publishFile(t, dir, "mesh-1", readAt, k)
			b, _ := os.ReadFile(p)
			// The stopped container, which carries a floor, is removed.
			b = bytes.Replace(b, []byte(`"exited"`), []byte(`"created"`), 1)
			os.WriteFile(p, b, 0o644)
			return p
		}, published.WrongSigner, "altered since"},
		{"garbage signature", func(t *testing.T, dir string) string {
			p := publishFile(t, dir, "mesh-1", readAt, k)
			os.WriteFile(published.SignatureFile(p), []byte("bm90IGEgc2lnbmF0dXJl\n"), 0o644)
			return p
		}, published.Tampered, "malformed"},
		{"other host", func(t *testing.T, dir string) string {
			p := publishFile(t, dir, "mesh-2", readAt, k)
			return p
		}, published.OtherHost, "published by mesh-2"},
		{"too old", func(t *testing.T, dir string) string {
			return publishFile(t, dir, "mesh-1", now.Add(-time.Hour-time.Second), k)
		}, published.TooOld, "max_age is 1h0m0s"},
		{"future", func(t *testing.T, dir string) string {
			return publishFile(t, dir, "mesh-1", now.Add(published.ClockSkew+time.Second), k)
		}, published.Future, "not clock skew"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc := c.prepare(t, t.TempDir())
			s, err := fileHost("mesh-1", loc, k, now).Observe(context.Background())
			var r *published.Refusal
			if !errors.As(err, &r) || !errors.Is(err, published.ErrRefused) {
				t.Fatalf("got %v, %v; want a refusal", s, err)
			}
			if r.Reason != c.want || !strings.Contains(r.Error(), c.detail) || r.Host != "mesh-1" {
				t.Fatalf("refusal %q (reason %q), want reason %q mentioning %q", r, r.Reason, c.want, c.detail)
			}
		})
	}
}

// TestFileFreshnessEdges: within the clock-skew allowance and exactly at
// the maximum age, an observation counts.
func TestFileFreshnessEdges(t *testing.T) {
	k := verifytest.NewKey(t)
	dir := t.TempDir()
	publishFile(t, dir, "mesh-1", readAt, k)
	for _, now := range []time.Time{readAt.Add(-published.ClockSkew), readAt.Add(time.Hour)} {
		if _, err := fileHost("mesh-1", dir, k, now).Observe(context.Background()); err != nil {
			t.Errorf("now %s: %v", now, err)
		}
	}
}

func TestParseRefusesWhatIsNotAnObservation(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"pin_observation": 2, "host": "a", "read_at": "2026-09-17T10:00:00Z", "snapshot": {"schema": 1, "containers": [], "images": []}}`,
		`{"pin_observation": 1, "host": "a", "read_at": "2026-09-17T10:00:00Z", "snapshot": {"schema": 1, "containers": [{"name": "x"}], "images": []}}`,
		`{"pin_observation": 1, "host": "a", "read_at": "2026-09-17T10:00:00Z", "snapshot": {"schema": 1, "host": "b", "containers": [], "images": []}}`,
		`{"pin_observation": 1, "host": "a", "read_at": "2026-09-17T10:00:00Z", "extra": 1, "snapshot": {"schema": 1, "containers": [], "images": []}}`,
	} {
		if o, err := published.Parse([]byte(in)); err == nil {
			t.Errorf("%s: read as %+v", in, o)
		}
	}
}

// TestRolledBackRefused: an observation read at 10:05 is verified (the
// cache remembers it); the publication then goes back to one read at
// 09:50, still within max_age (a stale mirror, or a replay), and is
// refused as rolled back, naming both times: it could hide what the host
// started since. The same observation again, or a newer one, counts; a
// client without a cache cannot know, and reads it.
func TestRolledBackRefused(t *testing.T) {
	k := verifytest.NewKey(t)
	dir := t.TempDir()
	cache := published.NewCache(t.TempDir())
	now := readAt.Add(30 * time.Minute)
	read := func(at time.Time, c *published.Cache) error {
		publishFile(t, dir, "mesh-1", at, k)
		h := fileHost("mesh-1", dir, k, now)
		h.Cache = c
		_, err := h.Observe(context.Background())
		return err
	}
	newer, older := readAt.Add(5*time.Minute), readAt.Add(-10*time.Minute)
	if err := read(newer, cache); err != nil {
		t.Fatal(err)
	}
	if err := read(newer, cache); err != nil {
		t.Errorf("the same observation again: %v", err)
	}
	err := read(older, cache)
	var r *published.Refusal
	if !errors.As(err, &r) || r.Reason != published.RolledBack || !strings.Contains(r.Error(), older.Format(time.RFC3339)) || !strings.Contains(r.Error(), newer.Format(time.RFC3339)) {
		t.Errorf("the older observation after the newer: %v, want refused as rolled back naming both read times", err)
	}
	if err := read(older, nil); err != nil {
		t.Errorf("without a cache: %v", err)
	}
	if err := read(newer.Add(time.Minute), cache); err != nil {
		t.Errorf("a newer one: %v", err)
	}
	if err := read(newer, cache); err == nil {
		t.Error("the watermark did not move to the newest read")
	}
}
