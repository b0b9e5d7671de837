package admit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

// indexRegistry holds 1.22.6 and 1.27.3 as single manifests, and an index
// "mixed" whose linux/amd64 entry is 1.22.6 and whose linux/arm64 entry
// is the very 1.27.3 manifest (listed there by mistake).
type indexRegistry struct{}

func (indexRegistry) Tags(context.Context, string) ([]string, error) { return nil, nil }
func (indexRegistry) Image(_ context.Context, _, ref, platform string) (image.Image, error) {
	single := func(tag string) image.Image {
		return image.Image{Repository: repo, Digest: digestOf(tag), ConfigDigest: digestOf("config " + tag), Platform: "linux/amd64",
			Labels: map[string]string{image.LabelVersion: tag}}
	}
	switch ref {
	case "1.22.6", digestOf("1.22.6"):
		return single("1.22.6"), nil
	case "1.27.3", digestOf("1.27.3"):
		return single("1.27.3"), nil
	case "mixed", digestOf("mixed"):
		entry := single("1.22.6")
		if platform == "linux/arm64" {
			entry = single("1.27.3")
			entry.Platform = "linux/arm64"
		}
		entry.Digest = digestOf("mixed")
		entry.Platforms = map[string]string{"linux/amd64": digestOf("1.22.6"), "linux/arm64": digestOf("1.27.3")}
		return entry, nil
	}
	return image.Image{}, image.ErrNotFound
}

// TestIndexPlatformAtAdmit: the replicas of deployment/forgejo run the
// 1.27.3 manifest; an update names an index whose entry for the module's
// platform (its first platforms entry: a Kubernetes host does not say
// which node will run it) is 1.22.6, and whose arm64 entry is the 1.27.3
// manifest. Judged for linux/amd64, the index is older: refused. It holds
// once resolve.Judge's "same content" of an index is the entry a pull on
// the platform that will run gets, not any of its entries.
func TestIndexPlatformAtAdmit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "catalogue.hcl")
	os.WriteFile(p, []byte(`host "prod" {
  kubernetes = { namespace = "apps" }
}

module "forge" {
  image     = "`+repo+`"
  policy    = "at-least-running"
  platforms = ["linux/amd64"]
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
}
`), 0o644)
	cat, diags := catalogue.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	d := digestOf("1.27.3")
	cluster := func(context.Context) (*host.Snapshot, error) {
		return &host.Snapshot{Host: "prod", Containers: []host.Container{{ID: "forgejo-1/forgejo", Name: "forgejo", Image: repo + "@" + d, ImageID: d,
			State: "running", Workload: "deployment/forgejo", Pod: "forgejo-1"}}, Images: []host.Image{{ID: d, RepoDigests: []string{repo + "@" + d}}}}, nil
	}
	e := &enforce.Enforcer{Catalogue: cat, Hosts: map[string]observe.Host{"prod": hostFunc(cluster)}, Registry: func(string) resolve.Registry { return indexRegistry{} }}
	s := &Server{Enforcer: e, Namespaces: map[string]string{"apps": "prod"}}
	dep := func(ref string) string {
		return `{"metadata":{"name":"forgejo"},"spec":{"template":{"spec":{"containers":[{"name":"forgejo","image":"` + ref + `"}]}}}}`
	}
	r := s.Review(context.Background(), request("Deployment", "UPDATE", dep(repo+"@"+digestOf("mixed")), dep(repo+"@"+d)))
	if r.Allowed || !strings.Contains(r.Result.Message, "version 1.22.6 < 1.27.3") {
		t.Errorf("an index whose linux/amd64 entry is older: %+v", r.Result)
	}
}
