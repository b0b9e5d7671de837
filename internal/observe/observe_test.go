package observe

import (
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
)

const (
	repo   = "registry.example.org/team/svc"
	idNew  = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	digNew = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	digOld = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
)

// TestReferenceDigestAgainstContent: a container whose reference names a
// digest the running image was never pulled by (a hand-made or edited
// snapshot) is observed by what the image ID is known as, not by the
// claim; a reference that agrees is kept.
func TestReferenceDigestAgainstContent(t *testing.T) {
	m := &catalogue.Module{Name: "svc", Image: repo, RunsOn: []catalogue.RunsOn{{Host: "h", Container: "svc"}}}
	for _, tc := range []struct {
		ref, want string
	}{
		{repo + ":1.22.6@" + digOld, digNew}, // the claim disagrees with the image
		{repo + ":1.27.3@" + digNew, digNew}, // it agrees
		{repo + ":1.27.3", digNew},           // no claim
	} {
		snap := &host.Snapshot{Host: "h", ImageStore: "classic",
			Containers: []host.Container{{ID: "1", Name: "svc", Image: tc.ref, ImageID: idNew, State: "running"}},
			Images:     []host.Image{{ID: idNew, RepoDigests: []string{repo + "@" + digNew}}}}
		obs, _ := Observations(m, Observed{Snapshots: map[string]*host.Snapshot{"h": snap}})
		if len(obs) != 1 || obs[0].Image.Digest != tc.want {
			t.Errorf("%s: observed %+v, want digest %s", tc.ref, obs, tc.want)
		}
	}
}
