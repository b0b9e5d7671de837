package observe

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
)

const repo = "registry.example.org/forge/forgejo"

var (
	digestA = "sha256:" + strings.Repeat("a", 64)
	digestB = "sha256:" + strings.Repeat("b", 64)
)

// TestReplicasCollapse: the replicas of a workload container are one
// observation per image, whatever order the host listed the pods in: the
// count, the sorted pods, "running" when one replica runs, and the smallest
// tag among the references the replicas were started from.
func TestReplicasCollapse(t *testing.T) {
	pod := func(name, ref, digest, state string) host.Container {
		return host.Container{ID: name + "/forgejo", Name: "forgejo", Image: ref, ImageID: digest, State: state,
			Workload: "deployment/forgejo", Pod: name}
	}
	containers := []host.Container{
		pod("forgejo-7d8e9-c", repo+":stable", digestA, "waiting: CrashLoopBackOff"),
		pod("forgejo-7d8e9-a", repo+":1.27.3", digestA, "running"),
		pod("forgejo-7d8e9-b", repo+":stable", digestA, "running"),
		pod("forgejo-59f7c-x", repo+":1.22.6", digestB, "terminated: Error"),
		pod("forgejo-59f7c-y", repo+":1.22.6", digestB, "waiting: CrashLoopBackOff"),
		// Another workload's container of the same name and image.
		{ID: "db-0/forgejo", Name: "forgejo", Image: repo + ":1.27.3", ImageID: digestA, State: "running", Workload: "statefulset/db", Pod: "db-0"},
	}
	m := &catalogue.Module{Name: "forge", Image: repo, RunsOn: []catalogue.RunsOn{{Host: "prod", Workload: "deployment/forgejo"}}}
	type got struct {
		Container, State, Tag, Digest string
		Replicas                      int
		Pods                          []string
	}
	want := []got{
		{"deployment/forgejo/forgejo", "running", "1.27.3", digestA, 3, []string{"forgejo-7d8e9-a", "forgejo-7d8e9-b", "forgejo-7d8e9-c"}},
		{"deployment/forgejo/forgejo", "terminated: Error", "1.22.6", digestB, 2, []string{"forgejo-59f7c-x", "forgejo-59f7c-y"}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		cs := slices.Clone(containers)
		r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		snap := &host.Snapshot{Host: "prod", Containers: cs, Images: []host.Image{
			{ID: digestA, RepoDigests: []string{repo + "@" + digestA}},
			{ID: digestB, RepoDigests: []string{repo + "@" + digestB}},
		}}
		obs, missing := Observations(m, Observed{Snapshots: map[string]*host.Snapshot{"prod": snap}})
		var out []got
		for _, o := range obs {
			out = append(out, got{o.Container, o.State, o.Image.Tag, o.Image.Digest, o.Replicas, o.Pods})
		}
		if d := cmp.Diff(want, out); d != "" || missing != nil {
			t.Fatalf("pods in order %v: observations (-want +got):\n%s\nmissing %v", podNames(cs), d, missing)
		}
	}
}

// TestScaledToZero: a container read from a template is one observation
// with no replica, its image by the template's reference and no image ID.
func TestScaledToZero(t *testing.T) {
	snap := &host.Snapshot{Host: "prod", Containers: []host.Container{{ID: "deployment/idle/app", Name: "app", Image: repo + ":1.27.3",
		ImageID: repo + ":1.27.3", State: StateScaledToZero, Workload: "deployment/idle"}}}
	m := &catalogue.Module{Name: "forge", Image: repo, RunsOn: []catalogue.RunsOn{{Host: "prod", Workload: "deployment/idle"}}}
	obs, _ := Observations(m, Observed{Snapshots: map[string]*host.Snapshot{"prod": snap}})
	if len(obs) != 1 || obs[0].Container != "deployment/idle/app" || obs[0].Replicas != 0 || obs[0].Pods != nil ||
		obs[0].Image.Tag != "1.27.3" || obs[0].Image.ImageID != "" || obs[0].Image.Digest != "" {
		t.Errorf("observations %+v", obs)
	}
}

func podNames(cs []host.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
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

// TestIndexFindsWhatAScanFinds: an indexed Observed gives the same
// observations as one searched whole, for modules taken over by label on
// several hosts, by runs_on, and not at all.
func TestIndexFindsWhatAScanFinds(t *testing.T) {
	seen := Observed{Snapshots: map[string]*host.Snapshot{}}
	for _, h := range []string{"b", "a", "c"} {
		s := &host.Snapshot{Host: h}
		for i, mod := range []string{"web", "db", ""} {
			s.Containers = append(s.Containers, host.Container{ID: fmt.Sprintf("%s%d", h, i), Name: fmt.Sprintf("c%d", i), Image: "registry.example.org/x:1", ImageID: "sha256:" + strings.Repeat("1", 64),
				State: "running", Labels: map[string]string{catalogue.ModuleLabel: mod}})
		}
		seen.Snapshots[h] = s
	}
	delete(seen.Snapshots["c"].Containers[0].Labels, catalogue.ModuleLabel) // no web on c
	mods := []*catalogue.Module{
		{Name: "web", Image: "registry.example.org/x"},
		{Name: "db", Image: "registry.example.org/x", RunsOn: []catalogue.RunsOn{{Host: "a", Container: "c2"}}},
		{Name: "none", Image: "registry.example.org/x"},
	}
	indexed := seen
	indexed.Index()
	for _, m := range mods {
		want, _ := Observations(m, seen)
		got, _ := Observations(m, indexed)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("module %s: indexed %+v, scanned %+v", m.Name, got, want)
		}
		if m.Name == "web" && len(got) != 2 {
			t.Errorf("web: %d observations, want 2 (hosts a and b)", len(got))
		}
	}
}
