package admit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

// fakeOwners holds the owners of the namespace, by kind and name.
type fakeOwners struct {
	objects map[ref]metav1.ObjectMeta
	reads   int
}

func (f *fakeOwners) ObjectMeta(_ context.Context, kind, name string) (*metav1.ObjectMeta, error) {
	f.reads++
	m, ok := f.objects[ref{kind, name}]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(kind) + "s"}, name)
	}
	return &m, nil
}

func controlledBy(apiVersion, kind, name string) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("u-" + name), Controller: &yes}}
}

// sideCluster: forgejo (Deployment), web (selected by tier=web) and backup
// (a CronJob's job) each run 1.27.3.
func sideCluster(context.Context) (*host.Snapshot, error) {
	d := digestOf("1.27.3")
	c := func(pod, name, workload string, labels map[string]string) host.Container {
		return host.Container{ID: pod + "/" + name, Name: name, Image: repo + ":1.27.3", ImageID: d, State: "running", Labels: labels, Workload: workload, Pod: pod}
	}
	return &host.Snapshot{Host: "prod", Containers: []host.Container{
		c("forgejo-1", "forgejo", "deployment/forgejo", map[string]string{"app": "forgejo"}),
		c("web-1", "web", "deployment/web", map[string]string{"app": "web", "tier": "web"}),
		c("backup-100-x", "backup", "cronjob/backup", map[string]string{"app": "backup"}),
	}, Images: []host.Image{{ID: d, RepoDigests: []string{repo + "@" + d}}}}, nil
}

func sideServer(t *testing.T, owners *fakeOwners) *Server {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalogue.hcl")
	os.WriteFile(p, []byte(`host "prod" {
  kubernetes = { namespace = "apps" }
}

module "forge" {
  image  = "`+repo+`"
  policy = "at-least-running"
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
}

module "web" {
  image  = "`+repo+`"
  policy = "at-least-running"
  runs_on "prod" { selector = "tier=web" }
}

module "backup" {
  image  = "`+repo+`"
  policy = "at-least-running"
  runs_on "prod" {
    workload  = "cronjob/backup"
    container = "backup"
  }
}
`), 0o644)
	cat, diags := catalogue.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := &enforce.Enforcer{Catalogue: cat, Hosts: map[string]observe.Host{"prod": hostFunc(sideCluster)}, Registry: func(string) resolve.Registry { return &fakeRegistry{} }}
	s := &Server{Enforcer: e, Namespaces: map[string]string{"apps": "prod"}}
	if owners != nil {
		s.Owners = map[string]Owners{"prod": owners}
	}
	return s
}

// obj renders a JSON object from Go values.
func obj(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type m = map[string]any

func podSpec(name, tag string) m {
	return m{"containers": []m{{"name": name, "image": repo + ":" + tag}}}
}

func template(labels map[string]string, name, tag string) m {
	return m{"metadata": m{"labels": labels}, "spec": podSpec(name, tag)}
}

// TestReviewSideDoors: what an object is replaced from, what owns it, and
// what it adds to a Pod decide which modules judge it.
func TestReviewSideDoors(t *testing.T) {
	ctx := context.Background()
	web := func(labels map[string]string, tag string) string {
		return obj(t, m{"metadata": m{"name": "web"}, "spec": m{"selector": m{"matchLabels": m{"app": "web"}}, "template": template(labels, "web", tag)}})
	}
	webLabels := map[string]string{"app": "web", "tier": "web"}
	byLabel := map[string]string{"app": "web", "pin.module": "web"}
	forgejo := func(ctrName, tag string) string {
		return obj(t, m{"metadata": m{"name": "forgejo"}, "spec": m{"template": template(map[string]string{"app": "forgejo"}, ctrName, tag)}})
	}
	job := func(name string, owner []metav1.OwnerReference, annotations map[string]string, tag string) string {
		return obj(t, m{"metadata": m{"name": name, "ownerReferences": owner, "annotations": annotations}, "spec": m{"template": template(nil, "backup", tag)}})
	}
	pod := func(name string, labels map[string]string, owner []metav1.OwnerReference, annotations map[string]string, spec m) string {
		return obj(t, m{"metadata": m{"name": name, "labels": labels, "ownerReferences": owner, "annotations": annotations}, "spec": spec})
	}
	withEphemeral := func(spec m, tag string) m {
		out := m{}
		for k, v := range spec {
			out[k] = v
		}
		out["ephemeralContainers"] = []m{{"name": "debugger-x", "image": repo + ":" + tag, "targetContainerName": "forgejo"}}
		return out
	}
	owned := &fakeOwners{objects: map[ref]metav1.ObjectMeta{
		{"ReplicaSet", "forgejo-rollout"}: {Name: "forgejo-rollout", OwnerReferences: controlledBy("apps/v1", "Deployment", "forgejo")},
		{"ReplicaSet", "forgejo-6d9f"}:    {Name: "forgejo-6d9f", OwnerReferences: controlledBy("apps/v1", "Deployment", "forgejo")},
		{"Deployment", "forgejo"}:         {Name: "forgejo"},
		{"Job", "backup-manual"}:          {Name: "backup-manual", OwnerReferences: controlledBy("batch/v1", "CronJob", "backup")},
		{"CronJob", "backup"}:             {Name: "backup"},
		{"Job", "migrate"}:                {Name: "migrate"},
	}}
	annotated := &fakeOwners{objects: map[ref]metav1.ObjectMeta{
		{"ReplicaSet", "forgejo-rollout"}: {Name: "forgejo-rollout", OwnerReferences: controlledBy("apps/v1", "Deployment", "forgejo")},
		{"Deployment", "forgejo"}:         {Name: "forgejo", Annotations: map[string]string{enforce.AllowDowngradeKey: "rollback of 1.27"}},
		{"Job", "backup-manual"}:          {Name: "backup-manual", OwnerReferences: controlledBy("batch/v1", "CronJob", "backup")},
		{"CronJob", "backup"}:             {Name: "backup", Annotations: map[string]string{enforce.AllowDowngradeKey: "restore test"}},
	}}
	forgejoPod := podSpec("forgejo", "1.27.3")
	for _, tt := range []struct {
		name        string
		kind, op    string
		object, old string
		owners      *fakeOwners
		allow       bool
		says        string
	}{
		// The old object's coverage counts.
		{name: "update to older dropping the selector's label", kind: "Deployment", op: "UPDATE",
			object: web(map[string]string{"app": "web"}, "1.22.6"), old: web(webLabels, "1.27.3"), says: `module "web": refusing a downgrade`},
		{name: "update to older dropping pin.module", kind: "Deployment", op: "UPDATE",
			object: web(map[string]string{"app": "web"}, "1.22.6"), old: web(byLabel, "1.27.3"), says: `module "web": refusing a downgrade`},
		{name: "update to newer dropping the label", kind: "Deployment", op: "UPDATE",
			object: web(map[string]string{"app": "web"}, "1.28.0.1"), old: web(webLabels, "1.27.3"), allow: true},
		{name: "update renaming the module's container, older", kind: "Deployment", op: "UPDATE",
			object: forgejo("forgejo2", "1.22.6"), old: forgejo("forgejo", "1.27.3"), says: `container "forgejo2": module "forge": refusing a downgrade`},
		{name: "update replacing the module's container with another repository's", kind: "Deployment", op: "UPDATE",
			object: obj(t, m{"metadata": m{"name": "forgejo"}, "spec": m{"template": m{"spec": m{"containers": []m{{"name": "proxy", "image": "registry.example.org/envoy:1"}}}}}}),
			old:    forgejo("forgejo", "1.27.3"), allow: true},
		// Owners.
		{name: "a Job from the CronJob, older", kind: "Job", op: "CREATE", object: job("backup-manual", controlledBy("batch/v1", "CronJob", "backup"), nil, "1.22.6"),
			says: `module "backup": refusing a downgrade`},
		{name: "a Job from the CronJob, older, the reason on the CronJob", kind: "Job", op: "CREATE", owners: annotated,
			object: job("backup-manual", controlledBy("batch/v1", "CronJob", "backup"), nil, "1.22.6"), allow: true},
		{name: "a Job of no CronJob", kind: "Job", op: "CREATE", object: job("migrate", nil, nil, "1.22.6"), allow: true},
		{name: "the Job's Pod, older", kind: "Pod", op: "CREATE", owners: owned,
			object: pod("backup-manual-x", nil, controlledBy("batch/v1", "Job", "backup-manual"), nil, podSpec("backup", "1.22.6")), says: `module "backup": refusing a downgrade`},
		{name: "the Job's Pod, older, the reason on the CronJob", kind: "Pod", op: "CREATE", owners: annotated,
			object: pod("backup-manual-x", nil, controlledBy("batch/v1", "Job", "backup-manual"), nil, podSpec("backup", "1.22.6")), allow: true},
		{name: "a Pod of a Job no CronJob owns", kind: "Pod", op: "CREATE", owners: owned,
			object: pod("migrate-x", nil, controlledBy("batch/v1", "Job", "migrate"), nil, podSpec("backup", "1.22.6")), allow: true},
		{name: "a Pod of a ReplicaSet named otherwise, older", kind: "Pod", op: "CREATE", owners: owned,
			object: pod("forgejo-rollout-x", map[string]string{"app": "forgejo"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-rollout"), nil, podSpec("forgejo", "1.22.6")),
			says:   `module "forge": refusing a downgrade`},
		{name: "the ReplicaSet's Pod, older, the reason on the Deployment", kind: "Pod", op: "CREATE", owners: annotated,
			object: pod("forgejo-rollout-x", map[string]string{"app": "forgejo"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-rollout"), nil, podSpec("forgejo", "1.22.6")), allow: true},
		// Ephemeral containers.
		{name: "an ephemeral container, older", kind: "Pod", op: "UPDATE", owners: owned,
			object: pod("forgejo-6d9f-a", map[string]string{"app": "forgejo", "pod-template-hash": "6d9f"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-6d9f"), nil, withEphemeral(forgejoPod, "1.22.6")),
			old:    pod("forgejo-6d9f-a", map[string]string{"app": "forgejo", "pod-template-hash": "6d9f"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-6d9f"), nil, forgejoPod),
			says:   `ephemeral container "debugger-x": module "forge": refusing a downgrade`},
		{name: "an ephemeral container, older, the Pod annotated", kind: "Pod", op: "UPDATE", owners: owned,
			object: pod("forgejo-6d9f-a", map[string]string{"app": "forgejo"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-6d9f"), map[string]string{enforce.AllowEphemeralKey: "debugging 42"}, withEphemeral(forgejoPod, "1.22.6")),
			old:    pod("forgejo-6d9f-a", map[string]string{"app": "forgejo"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-6d9f"), map[string]string{enforce.AllowEphemeralKey: "debugging 42"}, forgejoPod),
			allow:  true},
		{name: "an ephemeral container, the Pod's allow-downgrade is not for it", kind: "Pod", op: "UPDATE", owners: owned,
			object: pod("forgejo-6d9f-a", map[string]string{"app": "forgejo"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-6d9f"), map[string]string{enforce.AllowDowngradeKey: "rollback"}, withEphemeral(forgejoPod, "1.22.6")),
			old:    pod("forgejo-6d9f-a", map[string]string{"app": "forgejo"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-6d9f"), map[string]string{enforce.AllowDowngradeKey: "rollback"}, forgejoPod),
			says:   enforce.AllowEphemeralKey},
		{name: "an ephemeral debugging image of another repository", kind: "Pod", op: "UPDATE", owners: owned,
			object: pod("forgejo-6d9f-a", map[string]string{"app": "forgejo"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-6d9f"), nil,
				m{"containers": forgejoPod["containers"], "ephemeralContainers": []m{{"name": "debugger-y", "image": "busybox:1.36"}}}),
			old:  pod("forgejo-6d9f-a", map[string]string{"app": "forgejo"}, controlledBy("apps/v1", "ReplicaSet", "forgejo-6d9f"), nil, forgejoPod),
			says: "not from the module's repository"},
		{name: "an ephemeral container in a Pod no module covers", kind: "Pod", op: "UPDATE", owners: owned,
			object: pod("tool", nil, nil, nil, withEphemeral(podSpec("tool", "1.22.6"), "1.22.6")), old: pod("tool", nil, nil, nil, podSpec("tool", "1.22.6")), allow: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := sideServer(t, tt.owners)
			r := s.Review(ctx, request(tt.kind, tt.op, tt.object, tt.old))
			msg := ""
			if r.Result != nil {
				msg = r.Result.Message
			}
			if r.Allowed != tt.allow || !strings.Contains(msg, tt.says) {
				t.Errorf("allowed %v, want %v, with %q:\n%s", r.Allowed, tt.allow, tt.says, msg)
			}
		})
	}
}

// TestOwnersReadOnlyWhenNeeded: a Pod's owners are read only when a module
// names a workload on its host, and a Deployment's update reads none.
func TestOwnersReadOnlyWhenNeeded(t *testing.T) {
	ctx := context.Background()
	owners := &fakeOwners{objects: map[ref]metav1.ObjectMeta{}}
	s := sideServer(t, owners)
	s.Review(ctx, request("Deployment", "UPDATE", obj(t, m{"metadata": m{"name": "forgejo"}, "spec": m{"template": template(nil, "forgejo", "1.28.0.1")}}),
		obj(t, m{"metadata": m{"name": "forgejo"}, "spec": m{"template": template(nil, "forgejo", "1.27.3")}})))
	if owners.reads != 0 {
		t.Errorf("a Deployment's update read %d owners", owners.reads)
	}
	for _, mod := range s.Enforcer.Catalogue.Modules {
		mod.RunsOn = []catalogue.RunsOn{{Host: "prod", Container: mod.Name}}
	}
	s.Review(ctx, request("Pod", "CREATE", obj(t, m{"metadata": m{"name": "x", "ownerReferences": controlledBy("apps/v1", "ReplicaSet", "x-1")}, "spec": podSpec("forgejo", "1.28.0.1")}), ""))
	if owners.reads != 0 {
		t.Errorf("a Pod was traced though no module names a workload: %d reads", owners.reads)
	}
}
