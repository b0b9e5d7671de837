package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/image"
)

const (
	forge     = "registry.example.org/forge/forgejo"
	analytics = "registry.example.org/analytics/web"
)

func openIncident(t *testing.T) *Layout {
	t.Helper()
	l, err := OpenLayout("../../examples/incident/registry")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLayoutTags(t *testing.T) {
	l := openIncident(t)
	ctx := context.Background()
	tags, err := l.Tags(ctx, forge)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1.22.6", "1.23.5", "1.24.2", "1.25.1", "1.26.1", "1.27.3"}, tags); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if tags, _ := l.Tags(ctx, analytics); !cmp.Equal(tags, []string{"latest"}) {
		t.Errorf("analytics tags = %v", tags)
	}
	if tags, _ := l.Tags(ctx, "registry.example.org/nothing/here"); len(tags) != 0 {
		t.Errorf("unknown repository has tags %v", tags)
	}
}

func TestLayoutImage(t *testing.T) {
	l := openIncident(t)
	ctx := context.Background()
	img, err := l.Image(ctx, forge, "1.22.6", "linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	if img.Digest != "sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665" || img.Tag != "1.22.6" ||
		img.VersionLabel() != "1.22.6" || !img.Created.Equal(time.Date(2024, 12, 12, 0, 0, 0, 0, time.UTC)) || img.Platform != "linux/amd64" || img.Platforms != nil {
		t.Errorf("forge 1.22.6 = %+v", img)
	}

	// The multi-platform release resolves to the asked platform and keeps
	// the index digest and every platform's digest.
	arm, err := l.Image(ctx, forge, "1.27.3", "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	amd, err := l.Image(ctx, forge, "1.27.3", "linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	if arm.Digest != amd.Digest || len(arm.Platforms) != 2 || arm.Platform != "linux/arm64/v8" || arm.ConfigDigest == amd.ConfigDigest {
		t.Errorf("index resolution: arm=%+v amd=%+v", arm, amd)
	}
	if arm.PlatformDigest() != arm.Platforms["linux/arm64/v8"] || arm.PlatformDigest() == arm.Digest {
		t.Errorf("platform digest = %s", arm.PlatformDigest())
	}
	// The platform manifest by digest is the same content as the index.
	byPlatform, err := l.Image(ctx, forge, arm.PlatformDigest(), "linux/arm64")
	if err != nil || byPlatform.ConfigDigest != arm.ConfigDigest || byPlatform.Tag != "" {
		t.Errorf("platform manifest by digest: %+v %v", byPlatform, err)
	}

	if _, err := l.Image(ctx, forge, "1.27.3", "windows/amd64"); !errors.Is(err, image.ErrNotFound) {
		t.Errorf("missing platform: err = %v", err)
	}
	if _, err := l.Image(ctx, forge, "9.9.9", "linux/amd64"); !errors.Is(err, image.ErrNotFound) {
		t.Errorf("missing tag: err = %v", err)
	}
	// The untagged analytics build is reachable by digest.
	old, err := l.Image(ctx, analytics, "sha256:29742d2d37ae3b82053032635079e5c0479eb258f7b6d747c399eb816617d3d9", "linux/amd64")
	if err != nil || !old.Created.Equal(time.Date(2026, 8, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("untagged build: %+v %v", old, err)
	}
}

// copyIncident opens a copy of the incident's layout, to be changed.
func copyIncident(t *testing.T) (string, *Layout) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/incident/registry")); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, l
}

// TestLayoutRefusesTamperedContent: a blob that does not match its digest
// is refused, never described.
func TestLayoutRefusesTamperedContent(t *testing.T) {
	dir, l := copyIncident(t)
	img, err := l.Image(context.Background(), forge, "1.22.6", "linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "blobs", "sha256", img.ConfigDigest[len("sha256:"):])
	os.Chmod(cfg, 0o644)
	if err := os.WriteFile(cfg, []byte(`{"created":"2030-01-01T00:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Image(context.Background(), forge, "1.22.6", "linux/amd64"); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("tampered config: err = %v, want a digest mismatch", err)
	}
	if _, err := OpenLayout(t.TempDir()); err == nil {
		t.Error("an empty folder opened as a layout")
	}
}

// TestLayoutReadErrorIsNotNotFound: a blob the layout does not hold is not
// found (content out of reach); one it holds and cannot be read is an
// error of the mirror's, named with the blob, and never taken for "not
// found".
func TestLayoutReadErrorIsNotNotFound(t *testing.T) {
	dir, l := copyIncident(t)
	ctx := context.Background()
	img, err := l.Image(ctx, forge, "1.22.6", "linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "blobs", "sha256", img.ConfigDigest[len("sha256:"):])
	os.Chmod(cfg, 0o644)
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Image(ctx, forge, "1.22.6", "linux/amd64"); !errors.Is(err, image.ErrNotFound) {
		t.Errorf("config blob missing: err = %v, want not found", err)
	}
	// A folder where the blob should be: reading it fails (as a disk
	// error or a permission would; the tests run as root, whom no mode
	// stops).
	if err := os.Mkdir(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = l.Image(ctx, forge, "1.22.6", "linux/amd64")
	if err == nil || errors.Is(err, image.ErrNotFound) || !strings.Contains(err.Error(), img.ConfigDigest) {
		t.Errorf("config blob unreadable: err = %v, want an error naming %s that is not \"not found\"", err, img.ConfigDigest)
	}
}
