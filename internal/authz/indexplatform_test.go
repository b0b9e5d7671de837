package authz

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

// indexRegistry holds 1.22.6 and 1.27.3 as single manifests, and an index
// "mixed" whose linux/amd64 entry is 1.22.6 and whose linux/arm64 entry
// is the very 1.27.3 manifest.
type indexRegistry struct{}

func (indexRegistry) Tags(context.Context, string) ([]string, error) { return nil, nil }
func (indexRegistry) Image(_ context.Context, _, ref, platform string) (image.Image, error) {
	single := func(tag, platform string) image.Image {
		return image.Image{Repository: repo, Digest: digestOf(tag), ConfigDigest: digestOf("config " + tag), Platform: platform,
			Labels: map[string]string{image.LabelVersion: tag}}
	}
	switch ref {
	case "1.22.6", digestOf("1.22.6"):
		return single("1.22.6", "linux/amd64"), nil
	case "1.27.3", digestOf("1.27.3"):
		return single("1.27.3", "linux/amd64"), nil
	case "mixed", digestOf("mixed"):
		entry := single("1.22.6", "linux/amd64")
		if platform == "linux/arm64" {
			entry = single("1.27.3", "linux/amd64") // the amd64 manifest, listed as arm64 by mistake
			entry.Platform = "linux/arm64"
		}
		entry.Digest = digestOf("mixed")
		entry.Platforms = map[string]string{"linux/amd64": digestOf("1.22.6"), "linux/arm64": digestOf("1.27.3")}
		return entry, nil
	}
	return image.Image{}, image.ErrNotFound
}

// TestIndexPlatformAtAuthz: an amd64 Engine runs the 1.27.3 manifest
// (pulled by digest); a create names an index whose amd64 entry, which
// this Engine would pull, is 1.22.6, and whose arm64 entry is the 1.27.3
// manifest. The Engine's platform reaches resolve.Judge through what the
// module runs there, so the index is the amd64 entry: older, refused. It
// holds once resolve.Judge's "same content" of an index is the entry a
// pull on the host's platform gets, not any of its entries.
func TestIndexPlatformAtAuthz(t *testing.T) {
	p := filepath.Join(t.TempDir(), "catalogue.hcl")
	os.WriteFile(p, []byte(`host "mesh" {
  docker = "unix:///nowhere.sock"
}

module "forge" {
  image  = "`+repo+`"
  policy = "at-least-running"
  runs_on "mesh" { container = "forgejo" }
}
`), 0o644)
	cat, diags := catalogue.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	id := digestOf("config 1.27.3")
	engine := func() (*host.Snapshot, error) {
		return &host.Snapshot{Host: "mesh", ImageStore: "classic", Containers: []host.Container{
			{ID: "c1", Name: "forgejo", Image: repo + "@" + digestOf("1.27.3"), ImageID: id, State: "running"}},
			Images: []host.Image{{ID: id, RepoDigests: []string{repo + "@" + digestOf("1.27.3")}, OS: "linux", Arch: "amd64",
				Labels: map[string]string{image.LabelVersion: "1.27.3"}}}}, nil
	}
	e := &enforce.Enforcer{Catalogue: cat, Hosts: map[string]observe.Host{"mesh": hostFunc(engine)},
		Registry: func(string) resolve.Registry { return indexRegistry{} }, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }}
	s := &Server{Enforcer: e, Host: "mesh"}
	r := s.Authorize(context.Background(), createOf("forgejo", repo+"@"+digestOf("mixed"), nil))
	if r.Allow || !strings.Contains(r.Msg, "version 1.22.6 < 1.27.3") {
		t.Errorf("an index whose amd64 entry is older, on an amd64 Engine: allow %v\n%s", r.Allow, r.Msg)
	}
}
