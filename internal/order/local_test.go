package order

import (
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/image"
)

// TestKnownLocalBuild: an image a host holds by no registry digest is
// judged by its image ID alone; what is said of it is why (no registry
// digest: its tag and label are claims pin cannot check), never "no
// version in its tag or label", which a reader who tagged it 1.28.0 and
// labelled it so would take for a false statement.
func TestKnownLocalBuild(t *testing.T) {
	o := Options{}
	id := "sha256:" + strings.Repeat("ab", 32)
	got := o.Known(image.Image{Repository: "registry.example.org/forge/forgejo", ImageID: id})
	want := "built, committed or loaded on its host: it has no registry digest (image ID sha256:abababababab), so its tag and label are claims pin cannot check, and only the same content as what runs orders it"
	if got != want {
		t.Errorf("Known:\n got %s\nwant %s", got, want)
	}
	// An image known by more (a registry digest, a tag) says what it is.
	if got := o.Known(image.Image{Repository: "r/x", Digest: id, Tag: "latest"}); !strings.Contains(got, "no semver version in its tag or label") {
		t.Errorf("a registry image: %s", got)
	}
}

// TestCompareLocalBuild: a local build against a versioned floor is
// unknown, and the words say why (its claims are not weighed), not that it
// has no version.
func TestCompareLocalBuild(t *testing.T) {
	o := Options{}
	id := "sha256:" + strings.Repeat("ab", 32)
	d := "sha256:" + strings.Repeat("cd", 32)
	res := Compare(image.Image{Repository: "r/x", ImageID: id}, image.Image{Repository: "r/x", Digest: d, Tag: "1.27.3"}, o)
	if res.Cmp != Unknown || strings.Contains(res.Detail, "only one of them has a version") || !strings.Contains(res.Detail, "claims pin cannot check") {
		t.Errorf("Compare: %v %s", res.Cmp, res.Detail)
	}
}
