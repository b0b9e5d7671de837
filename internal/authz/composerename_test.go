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
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

// TestComposeRenamedContainerCounts: Compose, recreating a service,
// renames the old container "<its ID's first 12 hex digits>_<name>"
// before it starts the new one. Module forge takes over the container
// forgejo (by name), which Compose labelled forge-stack/forgejo: renamed
// so, it is still forge's floor, so a create of the service's next
// replica (same labels) at an older build is denied, as it is before the
// rename. The oracle is the builds' versions, 1.27.3 > 1.22.6.
func TestComposeRenamedContainerCounts(t *testing.T) {
	labels := map[string]string{ComposeProject: "forge-stack", ComposeService: "forgejo"}
	id := "b401a7120fda" + strings.Repeat("0", 52)
	for _, name := range []string{"forgejo", "b401a7120fda_forgejo"} {
		t.Run(name, func(t *testing.T) {
			snap := func() (*host.Snapshot, error) {
				return &host.Snapshot{Host: "mesh", ImageStore: "classic", Containers: []host.Container{
					{ID: id, Name: name, Image: repo + ":1.27.3", ImageID: id27, State: "running", Labels: labels},
				}, Images: []host.Image{hostImages[id22], hostImages[id27]}}, nil
			}
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
			e := &enforce.Enforcer{Catalogue: cat, Hosts: map[string]observe.Host{"mesh": hostFunc(snap)},
				Registry: func(string) resolve.Registry { return fakeRegistry{} }, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }}
			s := &Server{Enforcer: e, Host: "mesh", Engine: newFakeEngine()}
			r := s.Authorize(context.Background(), createOf("forge-stack_forgejo_3", repo+":1.22.6", labels))
			if r.Allow || !strings.Contains(r.Msg, "refusing a downgrade") || !strings.Contains(r.Msg, "mesh/"+name) {
				t.Errorf("create of forge-stack_forgejo_3 at 1.22.6 beside %s (1.27.3): allow %v\n%s", name, r.Allow, r.Msg)
			}
		})
	}
}
