package scaffold

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/imageref"
)

// TestPlatform: --platform wins; else the platform every running
// container of the host read runs; else linux/amd64, also when the
// running containers disagree or say none.
func TestPlatform(t *testing.T) {
	snap := func(platforms ...string) *host.Snapshot {
		s := &host.Snapshot{}
		for i, p := range platforms {
			id := string(rune('a' + i))
			os, arch, _ := strings.Cut(p, "/")
			arch, variant, _ := strings.Cut(arch, "/")
			s.Containers = append(s.Containers, host.Container{ID: id, ImageID: id, State: host.StateRunning})
			s.Images = append(s.Images, host.Image{ID: id, OS: os, Arch: arch, Variant: variant})
		}
		return s
	}
	stopped := snap("linux/arm64", "linux/amd64")
	stopped.Containers[1].State = host.StateExited
	for _, tc := range []struct {
		name, given string
		s           *host.Snapshot
		want        string
	}{
		{"given", "linux/s390x", snap("linux/arm64"), "linux/s390x"},
		{"no host", "", nil, DefaultPlatform},
		{"the host's", "", snap("linux/arm64/v8", "linux/arm64/v8"), "linux/arm64/v8"},
		{"disagree", "", snap("linux/arm64", "linux/amd64"), DefaultPlatform},
		{"only what runs", "", stopped, "linux/arm64"},
		{"unknown", "", snap("/"), DefaultPlatform},
	} {
		if got := Platform(tc.given, tc.s); got != tc.want {
			t.Errorf("%s: Platform = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRunAppendsAndChecks: Run appends the missing modules to the
// catalogue file, pinned at the digests asked for, leaves it alone when
// nothing is missing, and writes nothing when the file changed after it
// was read.
func TestRunAppendsAndChecks(t *testing.T) {
	dir := t.TempDir()
	catPath := filepath.Join(dir, "pin.hcl")
	if err := os.WriteFile(catPath, []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}
	man := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: forge}\nspec:\n  template:\n    spec:\n      containers:\n      - name: forge\n        image: registry.example.org/pin/forge:2.1\n")
	refs, objs, err := imageref.ManifestRefs("m.yaml", man)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, o := range objs {
		kinds[strings.ToLower(o.Kind)+"/"+o.Name] = o.Kind
	}
	asked := 0
	opts := Options{Policy: "exact", Digests: func(_ context.Context, repo, tag string) (string, error) {
		asked++
		return "sha256:" + strings.Repeat("ab", 32), nil
	}}
	cur, err := Open(catPath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cur, Found{Manifests: refs, Kinds: kinds}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(catPath)
	if !rep.Written || len(rep.Added) != 1 || asked != 1 || !strings.HasPrefix(string(b), existing) || !strings.Contains(string(b), `pin    = "2.1@sha256:abab`) {
		t.Fatalf("report %+v, asked %d; file:\n%s", rep, asked, b)
	}
	// Again: nothing missing, nothing written.
	cur, err = Open(catPath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = Run(context.Background(), cur, Found{Manifests: refs, Kinds: kinds}, opts)
	if err != nil || rep.Written || len(rep.Added) != 0 {
		t.Fatalf("second run: %+v, %v", rep, err)
	}
	// A file changed after it was read is not written over.
	if err := os.WriteFile(catPath, []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}
	cur, err = Open(catPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(catPath, []byte(existing+"# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cur, Found{Manifests: refs, Kinds: kinds}, opts); err == nil || !strings.Contains(err.Error(), "changed while pin init ran") {
		t.Errorf("changed file: error %v", err)
	}
	// A registry that cannot answer is a DigestError.
	opts.Digests = func(context.Context, string, string) (string, error) { return "", errors.New("unreachable") }
	var de *DigestError
	if _, err := Run(context.Background(), cur, Found{Manifests: refs, Kinds: kinds}, opts); !errors.As(err, &de) {
		t.Errorf("registry down: error %v, want a *DigestError", err)
	}
}
