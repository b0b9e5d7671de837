package observe

import (
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
)

const (
	svcRepo = "registry.example.org/team/svc"

	idNew  = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	digNew = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	digOld = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
)

// TestReferenceDigestAgainstContent: a container whose reference names a
// digest the running image was never pulled by (a hand-made or edited
// snapshot) is observed by what the image ID is known as, not by the
// claim; a reference that agrees is kept.
func TestReferenceDigestAgainstContent(t *testing.T) {
	m := &catalogue.Module{Name: "svc", Image: svcRepo, RunsOn: []catalogue.RunsOn{{Host: "h", Container: "svc"}}}
	for _, tc := range []struct {
		ref, want string
	}{
		{svcRepo + ":1.22.6@" + digOld, digNew}, // the claim disagrees with the image
		{svcRepo + ":1.27.3@" + digNew, digNew}, // it agrees
		{svcRepo + ":1.27.3", digNew},           // no claim
	} {
		snap := &host.Snapshot{Host: "h", ImageStore: "classic",
			Containers: []host.Container{{ID: "1", Name: "svc", Image: tc.ref, ImageID: idNew, State: "running"}},
			Images:     []host.Image{{ID: idNew, RepoDigests: []string{svcRepo + "@" + digNew}}}}
		obs, _ := Observations(m, Observed{Snapshots: map[string]*host.Snapshot{"h": snap}})
		if len(obs) != 1 || obs[0].Image.Digest != tc.want {
			t.Errorf("%s: observed %+v, want digest %s", tc.ref, obs, tc.want)
		}
	}
}
