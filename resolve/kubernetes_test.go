package resolve

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
)

// clusterSnapshot is what host/kubernetes reads of a namespace: a
// Deployment mid-rollout whose pods also run a sidecar, a StatefulSet pod
// and a pod nothing owns. The kubelet reports repository digests only: no
// build dates, labels or platforms.
func clusterSnapshot(newer, older image.Image) *host.Snapshot {
	app := map[string]string{"app": "svc", "pin.module": "other"}
	pod := func(name, workload, ctr, ref, digest, state string, l map[string]string) host.Container {
		return host.Container{ID: name + "/" + ctr, Name: ctr, Image: ref, ImageID: digest, State: state, Labels: l, Workload: workload, Pod: name}
	}
	const sidecar = "sha256:5555555555555555555555555555555555555555555555555555555555555555"
	return &host.Snapshot{Host: "prod",
		Containers: []host.Container{
			pod("svc-7c9f-a", "deployment/svc", "svc", repo+":stable", newer.Digest, "running", app),
			pod("svc-7c9f-a", "deployment/svc", "proxy", "registry.example.org/mesh/proxy:1", sidecar, "running", app),
			pod("svc-7c9f-b", "deployment/svc", "svc", repo+":1.22.6", older.Digest, "running", app),
			pod("svc-7c9f-b", "deployment/svc", "proxy", "registry.example.org/mesh/proxy:1", sidecar, "running", app),
			pod("svc-7c9f-c", "deployment/svc", "svc", repo+":stable", newer.Digest, "waiting: CrashLoopBackOff", app),
			pod("db-0", "statefulset/db", "svc", repo+":1.22.6", older.Digest, "running", map[string]string{"app": "db"}),
			pod("debug", "pod/debug", "svc", repo+":stable", newer.Digest, "running", nil),
		},
		Images: []host.Image{
			{ID: newer.Digest, RepoDigests: []string{repo + "@" + newer.Digest}},
			{ID: older.Digest, RepoDigests: []string{repo + "@" + older.Digest}},
			{ID: sidecar, RepoDigests: []string{"registry.example.org/mesh/proxy@" + sidecar}},
		},
	}
}

func TestObservationsWorkloads(t *testing.T) {
	newer, older := word(repo, "1.27.3/2026-09-01"), word(repo, "1.22.6/2024-12-12")
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{"prod": clusterSnapshot(newer, older)}}
	sel := func(s string) *catalogue.Selector {
		sel, msg := catalogue.ParseSelector(s)
		if msg != "" {
			t.Fatal(msg)
		}
		return sel
	}
	// Replicas of one image are one observation, keyed by workload; two
	// images of one container sort by digest.
	svc := []string{"deployment/svc/svc:running:svc-7c9f-a,svc-7c9f-c@new", "deployment/svc/svc:running:svc-7c9f-b@old"}
	if older.Digest < newer.Digest {
		svc[0], svc[1] = svc[1], svc[0]
	}
	proxy := "deployment/svc/proxy:running:svc-7c9f-a,svc-7c9f-b@proxy"
	for _, tt := range []struct {
		name    string
		ro      catalogue.RunsOn
		want    []string
		missing string
	}{
		{"workload and container", catalogue.RunsOn{Workload: "deployment/svc", Container: "svc"}, svc, ""},
		{"workload, every container", catalogue.RunsOn{Workload: "deployment/svc"}, append([]string{proxy}, svc...), ""},
		{"statefulset", catalogue.RunsOn{Workload: "statefulset/db"}, []string{"statefulset/db/svc:running:db-0@old"}, ""},
		{"one pod of a deployment", catalogue.RunsOn{Workload: "pod/svc-7c9f-b", Container: "svc"}, []string{"deployment/svc/svc:running:svc-7c9f-b@old"}, ""},
		{"a pod nothing owns", catalogue.RunsOn{Workload: "pod/debug"}, []string{"pod/debug/svc:running:debug@new"}, ""},
		{"selector and container", catalogue.RunsOn{Selector: sel("app in (svc,db)"), SelectorText: "app in (svc,db)", Container: "svc"},
			append(slices.Clone(svc), "statefulset/db/svc:running:db-0@old"), ""},
		{"missing workload", catalogue.RunsOn{Workload: "deployment/gone", Container: "svc"}, nil, "prod/deployment/gone container svc"},
		{"missing selector", catalogue.RunsOn{Selector: sel("app=nope"), SelectorText: "app=nope"}, nil, "prod/selector app=nope"},
		{"container name alone: every pod's", catalogue.RunsOn{Container: "proxy"}, []string{proxy}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ro := tt.ro
			ro.Host = "prod"
			m := &catalogue.Module{Name: "svc", Image: repo, RunsOn: []catalogue.RunsOn{ro}}
			obs, missing := observe.Observations(m, seen)
			var got []string
			for _, o := range obs {
				which := map[string]string{newer.Digest: "new", older.Digest: "old"}[o.Image.Digest]
				if which == "" {
					which = "proxy"
				}
				if o.Replicas != len(o.Pods) {
					t.Errorf("%s: %d replicas, pods %v", o.Where(), o.Replicas, o.Pods)
				}
				got = append(got, o.Container+":"+o.State+":"+strings.Join(o.Pods, ",")+"@"+which)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("observations (-want +got):\n%s", d)
			}
			if strings.Join(missing, ",") != tt.missing {
				t.Errorf("missing = %q, want %q", missing, tt.missing)
			}
		})
	}
}

// countingRegistry counts what is asked of a registry.
type countingRegistry struct {
	Registry
	asked map[string]int
}

func (c *countingRegistry) Image(ctx context.Context, repo, ref, platform string) (image.Image, error) {
	c.asked[ref]++
	return c.Registry.Image(ctx, repo, ref, platform)
}

// TestResolveCluster: replicas reported by digest only are described
// through the registry before ordering, each digest once; then a cluster
// decides like Docker hosts do.
func TestResolveCluster(t *testing.T) {
	newer := word(repo, "1.27.3/2026-09-01+1.27.3")
	older := word(repo, "1.22.6/2024-12-12+1.22.6")
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{"prod": clusterSnapshot(newer, older)}}
	decide := func(policy catalogue.Policy, reg Registry) *Decision {
		m := &catalogue.Module{Name: "svc", Image: repo, Policy: policy,
			Pin:    catalogue.Pin{Text: "1.22.6@" + older.Digest, Tag: "1.22.6", Digest: older.Digest},
			RunsOn: []catalogue.RunsOn{{Host: "prod", Workload: "deployment/svc", Container: "svc"}}}
		p := Resolve(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Observed: seen,
			Registry: func(string) Registry { return reg }, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
		return p.Decisions[0]
	}
	reg := &countingRegistry{Registry: newFakeRegistry(repo, "1.27.3/2026-09-01+1.27.3", "1.22.6/2024-12-12+1.22.6"), asked: map[string]int{}}

	d := decide(catalogue.Exact, reg)
	if d.Refusal() == nil || d.Refusal().Kind != KindDowngrade || d.Refusal().Floor.Observation.Container != "deployment/svc/svc" ||
		!slices.Equal(d.Refusal().Floor.Observation.Pods, []string{"svc-7c9f-a", "svc-7c9f-c"}) {
		t.Fatalf("exact: refusal %+v, err %v; want a downgrade refused against prod/deployment/svc/svc (pods svc-7c9f-a, svc-7c9f-c)", d.Refusal(), d.Err())
	}
	if !d.Skew {
		t.Error("replicas on two digests are not reported as skew")
	}
	// The floating tag says nothing: the version came from the registry.
	if got := d.Refusal().Floor.Image; got.VersionLabel() != "1.27.3" || !got.Created.Equal(newer.Created) {
		t.Errorf("the replica's image was not described: %+v", got)
	}
	if reg.asked[newer.Digest] != 1 {
		t.Errorf("registry asked %d times for %s, want once for all replicas", reg.asked[newer.Digest], image.Short(newer.Digest))
	}

	d = decide(catalogue.AtLeastRunning, reg)
	if d.New() == nil || d.New().Digest != newer.Digest || d.New().Source != "running" || d.New().Version != "1.27.3" {
		t.Fatalf("at-least-running: %+v, refusal %v, err %v", d.New(), d.Refusal(), d.Err())
	}
	if len(d.New().Observed) != 2 || d.New().Observed[0].Container != "deployment/svc/svc" || d.New().Observed[1].Container != "deployment/svc/svc" {
		t.Errorf("observed = %+v, want deployment/svc/svc twice: once per image its replicas run", d.New().Observed)
	}
	if strings.Contains(d.New().Reason, "svc-7c9f") {
		t.Errorf("the lock's reason names a pod: %s", d.New().Reason)
	}
	checkInvariant(t, d)

	// A registry that does not hold the digest leaves the floating tag
	// unordered: refused, never taken for older.
	d = decide(catalogue.Exact, newFakeRegistry(repo, "1.22.6/2024-12-12+1.22.6"))
	if d.Refusal() == nil || d.Refusal().Kind != KindUnknown {
		t.Errorf("digest unknown to the registry: refusal %+v, err %v; want unknown-order", d.Refusal(), d.Err())
	}
	// Any other registry failure is the module's error.
	d = decide(catalogue.Exact, brokenImages{Registry: reg, err: errors.New("503 service unavailable")})
	if d.Err() == nil || !strings.Contains(d.Err().Error(), "describing what prod/deployment/svc/svc runs") || !errors.As(d.Err(), new(*observe.SourceError)) {
		t.Errorf("broken registry: err = %v", d.Err())
	}
}

type brokenImages struct {
	Registry
	err error
}

func (b brokenImages) Image(context.Context, string, string, string) (image.Image, error) {
	return image.Image{}, b.err
}

// TestEnrichLeavesDockerObservations: what a Docker host reports (a
// platform, a date or labels, or no digest) is never asked again.
func TestEnrichLeavesDockerObservations(t *testing.T) {
	reg := &countingRegistry{Registry: newFakeRegistry(repo), asked: map[string]int{}}
	obs := []observe.Observation{
		{Host: "h", Container: "a", Image: image.Image{Repository: repo, Digest: word(repo, "1").Digest, Platform: "linux/amd64"}},
		{Host: "h", Container: "b", Image: image.Image{Repository: repo, Digest: word(repo, "2").Digest, Created: time.Unix(0, 0)}},
		{Host: "h", Container: "c", Image: image.Image{Repository: repo, Digest: word(repo, "3").Digest, Labels: map[string]string{"x": "y"}}},
		{Host: "h", Container: "d", Image: image.Image{Repository: repo, ImageID: word(repo, "4").Digest}},
	}
	if err := observe.Enrich(context.Background(), reg, &catalogue.Module{Name: "svc", Image: repo}, obs); err != nil {
		t.Fatal(err)
	}
	if len(reg.asked) != 0 {
		t.Errorf("asked %v", reg.asked)
	}
}
