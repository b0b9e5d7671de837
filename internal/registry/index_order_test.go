package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// entry is one manifest of a hand-built index, with the platform the
// index says it is for.
type entry struct {
	platform v1.Platform
	img      v1.Image
}

// rawIndex builds an index of entries in the order given, platforms as
// written (testimage.Index sorts and keys by platform: it cannot list one
// twice).
func rawIndex(t *testing.T, entries ...entry) v1.ImageIndex {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	for _, e := range entries {
		p := e.platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: e.img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx
}

func imageDigest(t *testing.T, img v1.Image) string {
	t.Helper()
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// TestIndexFirstMatchingEntry: an index is resolved to the first entry
// whose platform a pull takes, in the index's order, as Docker, containerd
// and go-containerregistry pull it (not the first by name), and an index
// that lists one platform twice is refused, naming both entries. Against
// the in-memory registry and the real docker-registry.
func TestIndexFirstMatchingEntry(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		ctx := context.Background()
		v7 := testimage.Build(t, testimage.Options{Content: "v7", Platform: testimage.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}, Created: created2})
		v6 := testimage.Build(t, testimage.Options{Content: "v6", Platform: testimage.Platform{OS: "linux", Architecture: "arm", Variant: "v6"}, Created: created1})
		old := testimage.Build(t, testimage.Options{Content: "old", Platform: testimage.Platform{OS: "linux", Architecture: "amd64"}, Created: created1,
			Labels: map[string]string{image.LabelVersion: "1.22.6"}})
		cur := testimage.Build(t, testimage.Options{Content: "new", Platform: testimage.Platform{OS: "linux", Architecture: "amd64"}, Created: created2,
			Labels: map[string]string{image.LabelVersion: "1.27.3"}})
		arm := v1.Platform{OS: "linux", Architecture: "arm"}
		amd := v1.Platform{OS: "linux", Architecture: "amd64"}

		repo := reg.host + "/index/order"
		// v7 listed before v6: a pull for linux/arm takes v7.
		armV7, armV6 := arm, arm
		armV7.Variant, armV6.Variant = "v7", "v6"
		testimage.Push(t, repo+":arm", rawIndex(t, entry{armV7, v7}, entry{armV6, v6}))
		// linux/amd64 listed twice: malformed.
		testimage.Push(t, repo+":twice", rawIndex(t, entry{amd, old}, entry{amd, cur}))

		r, _ := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: NewCache(t.TempDir())})
		got, err := r.Image(ctx, repo, "arm", "linux/arm")
		if err != nil {
			t.Fatal(err)
		}
		if got.Platform != "linux/arm/v7" || got.Created != created2 || got.Manifests[0].Digest != imageDigest(t, v7) || got.Manifests[1].Digest != imageDigest(t, v6) {
			t.Errorf("Image(arm, linux/arm): platform %s, created %s, entries %v; want the first entry, linux/arm/v7", got.Platform, got.Created, got.Manifests)
		}
		if d, ok := got.ManifestFor("linux/arm"); !ok || d != imageDigest(t, v7) {
			t.Errorf("ManifestFor(linux/arm) = %s, %v; want v7's", d, ok)
		}

		_, err = r.Image(ctx, repo, "twice", "linux/amd64")
		if !errors.Is(err, image.ErrMalformed) || !strings.Contains(err.Error(), "lists linux/amd64 twice, as entry 1 ("+image.Short(imageDigest(t, old))+") and entry 2 ("+image.Short(imageDigest(t, cur))+")") {
			t.Errorf("an index listing linux/amd64 twice: %v", err)
		}
	})
}
