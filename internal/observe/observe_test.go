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

// TestComposeServiceTakesOverEveryReplica: runs_on { compose =
// "forge/web" } takes over each container Compose labelled with that
// project and service (scaled replicas too), and nothing of another
// project or service, nor a pod's container with the same labels.
func TestComposeServiceTakesOverEveryReplica(t *testing.T) {
	m := &catalogue.Module{Name: "web", Image: repo, RunsOn: []catalogue.RunsOn{{Host: "h", Compose: "forge/web"}}}
	labels := func(project, service string) map[string]string {
		return map[string]string{catalogue.ComposeProjectLabel: project, catalogue.ComposeServiceLabel: service}
	}
	snap := &host.Snapshot{Host: "h", Containers: []host.Container{
		{ID: "1", Name: "forge-web-1", Image: repo + ":1", ImageID: idNew, State: "running", Labels: labels("forge", "web")},
		{ID: "2", Name: "forge-web-2", Image: repo + ":1", ImageID: idNew, State: "exited", Labels: labels("forge", "web")},
		{ID: "3", Name: "forge-db-1", Image: repo + ":1", ImageID: idNew, State: "running", Labels: labels("forge", "db")},
		{ID: "4", Name: "other-web-1", Image: repo + ":1", ImageID: idNew, State: "running", Labels: labels("other", "web")},
		{ID: "5", Name: "web", Pod: "web-0", Image: repo + ":1", ImageID: idNew, State: "running", Labels: labels("forge", "web")},
	}}
	obs, missing := Observations(m, Observed{Snapshots: map[string]*host.Snapshot{"h": snap}})
	var got []string
	for _, o := range obs {
		got = append(got, o.Container)
	}
	if len(missing) != 0 || len(got) != 2 || got[0] != "forge-web-1" || got[1] != "forge-web-2" {
		t.Fatalf("observed %v (missing %v), want forge-web-1 and forge-web-2", got, missing)
	}
	snap.Containers = snap.Containers[2:]
	if _, missing := Observations(m, Observed{Snapshots: map[string]*host.Snapshot{"h": snap}}); len(missing) != 1 || missing[0] != "h/compose service forge/web" {
		t.Fatalf("missing %v, want the compose service", missing)
	}
}
