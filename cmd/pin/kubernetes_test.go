package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestKubernetesEndToEnd: a Deployment is mid-rollout on a real API server.
// Its replicas run images pushed to a real registry: one still runs
// 1.22.6, the catalogue's pin; one runs 1.27.3 by its version tag, and one
// the same digest through the floating tag "stable", which says nothing
// of its version until the registry is asked. pin resolve refuses the exact
// pin, keeps the running image for at-least-running, lock --from-host
// records it (and a snapshot of the cluster gives the same lock), and pin
// plan on the cluster says downgrade for a lock of the old pin.
func TestKubernetesEndToEnd(t *testing.T) {
	reg := testenv.Registry(t)
	kc := testenv.Kubernetes(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/e2e/kube-forge-%d", reg, id)
	build := func(v, date string) string {
		created, _ := time.Parse("2006-01-02", date)
		img := testimage.Build(t, testimage.Options{Content: v, Created: created,
			Labels: map[string]string{"org.opencontainers.image.version": v}})
		return testimage.Push(t, repo+":"+v, img).DigestStr()
	}
	oldDigest := build("1.22.6", "2024-12-12")
	newDigest := build("1.27.3", "2026-09-01")

	k := testenv.NewCluster(t, kc)
	ns := k.Namespace(t, "pin-e2e")
	rs := k.Deployment(t, ns, "forgejo", "forgejo-59f7c")
	k.RunningPod(t, ns, "forgejo-59f7c-old11", rs, repo+":1.22.6", repo+"@"+oldDigest)
	k.RunningPod(t, ns, "forgejo-59f7c-new22", rs, repo+":1.27.3", repo+"@"+newDigest)
	k.RunningPod(t, ns, "forgejo-59f7c-new33", rs, repo+":stable", "docker-pullable://"+repo+"@"+newDigest)

	dir := t.TempDir()
	writeCat := func(policy, extra, hostAttr string) {
		cat := fmt.Sprintf(`host "prod" {
  %s
}

module "forge" {
  image  = %q
  policy = %q
  pin    = "1.22.6@%s"
  %s
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
}
`, hostAttr, repo, policy, oldDigest, extra)
		if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live := fmt.Sprintf("kubernetes = { kubeconfig = %q, namespace = %q }", kc, ns)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	// exact: refused, naming the replica that runs the newer image.
	writeCat("exact", "", live)
	r := pin(t, dir, "resolve", cache)
	if r.code != 1 || !strings.Contains(r.stderr, `module "forge": refusing a downgrade`) || !strings.Contains(r.stderr, "version 1.22.6 < 1.27.3") ||
		!strings.Contains(r.stderr, "prod/deployment/forgejo/forgejo runs") {
		t.Fatalf("exact: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); !os.IsNotExist(err) {
		t.Fatal("a refused resolve wrote the lock")
	}

	// at-least-running: the running image wins; lock --from-host says the
	// same as resolve, and records the replicas it was held against.
	writeCat("at-least-running", "", live)
	r = pin(t, dir, "resolve", cache)
	if r.code != 0 {
		t.Fatalf("at-least-running: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	resolved, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	for _, want := range []string{`digest  = "` + newDigest + `"`, `source  = "running"`, `version = "1.27.3"`,
		`observed "prod"`, `container = "deployment/forgejo/forgejo"`} {
		if !bytes.Contains(resolved, []byte(want)) {
			t.Errorf("lock lacks %s:\n%s", want, resolved)
		}
	}
	// One observation per image the replicas run, none naming a pod.
	if n := bytes.Count(resolved, []byte(`container = "deployment/forgejo/forgejo"`)); n != 2 || bytes.Contains(resolved, []byte("forgejo-59f7c")) {
		t.Errorf("lock: %d observations of deployment/forgejo/forgejo, want 2 (one per digest), and no pod named:\n%s", n, resolved)
	}
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	r = pin(t, dir, "lock", "--from-host", "prod", "--snapshot", "prod.json", cache)
	if r.code != 0 {
		t.Fatalf("lock --from-host: exit %d\n%s", r.code, r.stderr)
	}
	fromHost, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if !bytes.Equal(fromHost, resolved) {
		t.Errorf("lock --from-host differs from resolve:\n%s\n---\n%s", fromHost, resolved)
	}
	if r := pin(t, dir, "plan", "prod"); r.code != 0 || strings.Contains(r.stdout, "DOWNGRADE") {
		t.Fatalf("plan after lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The snapshot of the cluster gives the same lock: workloads are
	// matched in it as in the cluster.
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	writeCat("at-least-running", "", `snapshot = "prod.json"`)
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve from snapshot: %s", r.stderr)
	}
	if fromSnap, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(fromSnap, resolved) {
		t.Errorf("snapshot lock differs from live lock:\n%s\n---\n%s", fromSnap, resolved)
	}

	// A lock of the old pin (downgrade stated) fails the gate: a replica
	// runs 1.27.3.
	writeCat("exact", `allow_downgrade = "e2e"`, live)
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve with allow_downgrade: %s", r.stderr)
	}
	r = pin(t, dir, "plan", "prod", cache)
	if r.code != 1 || !strings.Contains(r.stdout, "prod/deployment/forgejo/forgejo (module forge): DOWNGRADE 1.27.3 → 1.22.6\n  runs     2 × ") ||
		!strings.Contains(r.stdout, "pods     forgejo-59f7c-new22, forgejo-59f7c-new33\n") || !strings.Contains(r.stdout, "version 1.22.6 < 1.27.3") {
		t.Fatalf("plan with the old pin locked: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "prod/deployment/forgejo/forgejo (module forge): SAME 1.22.6\n  runs     1 × ") || !strings.Contains(r.stdout, "pods     forgejo-59f7c-old11\n") {
		t.Errorf("plan: the replica on the pin is not the same image:\n%s", r.stdout)
	}
}

// TestKubernetesHostDown: a cluster that does not answer gives exit 3 and
// a message naming the host.
func TestKubernetesHostDown(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kc, []byte(`{"apiVersion":"v1","kind":"Config","current-context":"c",
"clusters":[{"name":"c","cluster":{"server":"https://127.0.0.1:1"}}],
"users":[{"name":"u","user":{"token":"t"}}],
"contexts":[{"name":"c","context":{"cluster":"c","user":"u"}}]}`), 0o600)
	cat := fmt.Sprintf(`host "prod" {
  kubernetes = { kubeconfig = %q, namespace = "apps" }
}

module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  pin    = "1.22.6"
  runs_on "prod" { workload = "deployment/forgejo" }
}
`, kc)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644)
	r := pin(t, dir, "resolve")
	if r.code != 3 || !strings.Contains(r.stderr, "host prod (https://127.0.0.1:1, namespace apps)") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if r := pin(t, dir, "plan", "prod"); r.code != 3 {
		t.Errorf("plan on a down cluster: exit %d\n%s", r.code, r.stderr)
	}
}

// TestKubernetesRolloutRestart: the lock keys a workload's replicas by
// workload, container and image, not by pod. After a rollout restart (a
// new ReplicaSet, new pods, the old ones gone) that also scaled the
// Deployment from 3 replicas to 2, pin resolve --check finds nothing to
// change; the plan's JSON names the new pods and their count. A lock
// written when observations were keyed by pod is read and rewritten to the
// workload's key, with the same image and no refusal.
func TestKubernetesRolloutRestart(t *testing.T) {
	reg := testenv.Registry(t)
	kc := testenv.Kubernetes(t)
	repo := fmt.Sprintf("%s/e2e/kube-restart-%d", reg, time.Now().UnixNano())
	created, _ := time.Parse("2006-01-02", "2026-09-01")
	img := testimage.Build(t, testimage.Options{Content: "1.27.3", Created: created,
		Labels: map[string]string{"org.opencontainers.image.version": "1.27.3"}})
	digest := testimage.Push(t, repo+":1.27.3", img).DigestStr()

	k := testenv.NewCluster(t, kc)
	ns := k.Namespace(t, "pin-e2e")
	rs := k.Deployment(t, ns, "forgejo", "forgejo-59f7c")
	before := []string{"forgejo-59f7c-aaaaa", "forgejo-59f7c-bbbbb", "forgejo-59f7c-ccccc"}
	for _, p := range before {
		k.RunningPod(t, ns, p, rs, repo+":1.27.3", repo+"@"+digest)
	}
	dir := t.TempDir()
	cat := fmt.Sprintf(`host "prod" {
  kubernetes = { kubeconfig = %q, namespace = %q }
}

module "forge" {
  image  = %q
  policy = "at-least-running"
  pin    = "1.27.3@%s"
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
}
`, kc, ns, repo, digest)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lockPath := filepath.Join(dir, "pin.lock.hcl")
	locked, _ := os.ReadFile(lockPath)
	if bytes.Contains(locked, []byte("forgejo-59f7c")) || !bytes.Contains(locked, []byte(`container = "deployment/forgejo/forgejo"`)) {
		t.Fatalf("the lock names pods, or not the workload:\n%s", locked)
	}

	// kubectl rollout restart, and a scale to 2: every pod replaced.
	ctx := context.Background()
	for _, p := range before {
		if err := k.CS.CoreV1().Pods(ns).Delete(ctx, p, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rs2 := k.ReplicaSet(t, ns, "forgejo", "forgejo-7d8e9")
	after := []string{"forgejo-7d8e9-xxxxx", "forgejo-7d8e9-yyyyy"}
	k.RunningPod(t, ns, after[0], rs2, repo+":1.27.3", repo+"@"+digest)
	// Another node's runtime reports the digest the dockershim way.
	k.RunningPod(t, ns, after[1], rs2, repo+":1.27.3", "docker-pullable://"+repo+"@"+digest)

	r := pin(t, dir, "resolve", "--check", "--format", "json", cache)
	if r.code != 0 {
		t.Fatalf("resolve --check after a rollout restart: exit %d, want 0 (the lock must not change)\n%s%s", r.code, r.stdout, r.stderr)
	}
	var plan struct {
		Modules []struct {
			Observations []struct {
				Container string
				Replicas  int
				Pods      []string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, r.stdout)
	}
	if len(plan.Modules) != 1 || len(plan.Modules[0].Observations) != 1 {
		t.Fatalf("plan: want one module with one observation:\n%s", r.stdout)
	}
	if o := plan.Modules[0].Observations[0]; o.Container != "deployment/forgejo/forgejo" || o.Replicas != 2 || !slices.Equal(o.Pods, after) {
		t.Errorf("plan observation %+v, want deployment/forgejo/forgejo, 2 replicas, pods %v", o, after)
	}
	if now, _ := os.ReadFile(lockPath); !bytes.Equal(now, locked) {
		t.Errorf("resolve --check wrote the lock")
	}

	// A lock of an earlier pin, its observation keyed by pod.
	podKeyed := bytes.Replace(locked, []byte(`container = "deployment/forgejo/forgejo"`), []byte(`container = "forgejo-59f7c-aaaaa/forgejo"`), 1)
	if bytes.Equal(podKeyed, locked) {
		t.Fatal("no observation to rewrite")
	}
	if err := os.WriteFile(lockPath, podKeyed, 0o644); err != nil {
		t.Fatal(err)
	}
	r = pin(t, dir, "resolve", cache)
	if r.code != 0 {
		t.Fatalf("resolve over a pod-keyed lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if now, _ := os.ReadFile(lockPath); !bytes.Equal(now, locked) {
		t.Errorf("a pod-keyed lock was not rewritten to the workload's key alone:\n%s\nwant\n%s", now, locked)
	}
	// The entry's observation changed, its image did not (the bytes above
	// say so): the plan says update, for the observation line alone.
}

// TestKubernetesIndexAndManifest: one node's runtime reports the index
// digest a replica runs, another's the digest of its platform manifest
// (docker-pullable://…). The images carry no version and no build date, so
// only their content can order them: the exact pin of the index is the
// same image as both replicas, and the lock records the index's platforms.
func TestKubernetesIndexAndManifest(t *testing.T) {
	reg := testenv.Registry(t)
	kc := testenv.Kubernetes(t)
	repo := fmt.Sprintf("%s/e2e/kube-index-%d", reg, time.Now().UnixNano())
	amd64 := testimage.Platform{OS: "linux", Architecture: "amd64"}
	arm64 := testimage.Platform{OS: "linux", Architecture: "arm64"}
	imgAMD := testimage.Build(t, testimage.Options{Content: "x", Platform: amd64})
	imgARM := testimage.Build(t, testimage.Options{Content: "x", Platform: arm64})
	index := testimage.Push(t, repo+":stable", testimage.Index(t, map[testimage.Platform]v1.Image{amd64: imgAMD, arm64: imgARM})).DigestStr()
	manifest, err := imgAMD.Digest()
	if err != nil {
		t.Fatal(err)
	}

	k := testenv.NewCluster(t, kc)
	ns := k.Namespace(t, "pin-e2e")
	rs := k.Deployment(t, ns, "forgejo", "forgejo-59f7c")
	k.RunningPod(t, ns, "forgejo-59f7c-aaaaa", rs, repo+":stable", repo+"@"+index)
	k.RunningPod(t, ns, "forgejo-59f7c-bbbbb", rs, repo+":stable", "docker-pullable://"+repo+"@"+manifest.String())
	dir := t.TempDir()
	cat := fmt.Sprintf(`host "prod" {
  kubernetes = { kubeconfig = %q, namespace = %q }
}

module "forge" {
  image  = %q
  policy = "exact"
  pin    = "stable@%s"
  runs_on "prod" { workload = "deployment/forgejo" }
}
`, kc, ns, repo, index)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pin(t, dir, "resolve", "--cache-dir="+filepath.Join(dir, "cache"))
	if r.code != 0 {
		t.Fatalf("resolve: exit %d, want the pin kept: both replicas run its content\n%s%s", r.code, r.stdout, r.stderr)
	}
	locked, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	// The other way round: the pin names the platform manifest, a replica
	// runs the index (its platforms read from the registry).
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(strings.Replace(cat, "stable@"+index, "stable@"+manifest.String(), 1)), 0o644)
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	if r := pin(t, dir, "resolve", "--cache-dir="+filepath.Join(dir, "cache")); r.code != 0 {
		t.Fatalf("resolve with the manifest pinned: exit %d, want the pin kept\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{`\n  digest += "` + index + `"`, `"linux/amd64" = "` + manifest.String() + `"`, `\n    digest += "` + manifest.String() + `"`} {
		if !regexp.MustCompile(want).Match(locked) {
			t.Errorf("lock lacks %s:\n%s", want, locked)
		}
	}
}

// TestKubernetesNotFloors: what a cluster shows but nothing runs as the
// workload is reported, never a floor. A Deployment scaled to zero whose
// template names a newer image than the exact pin, and a kubectl debug
// container (another image) beside a replica on the pin: pin resolve keeps
// the pin, records neither in the lock, and the plan says why.
func TestKubernetesNotFloors(t *testing.T) {
	reg := testenv.Registry(t)
	kc := testenv.Kubernetes(t)
	repo := fmt.Sprintf("%s/e2e/kube-idle-%d", reg, time.Now().UnixNano())
	build := func(v, date string) string {
		created, _ := time.Parse("2006-01-02", date)
		img := testimage.Build(t, testimage.Options{Content: v, Created: created,
			Labels: map[string]string{"org.opencontainers.image.version": v}})
		return testimage.Push(t, repo+":"+v, img).DigestStr()
	}
	oldDigest := build("1.22.6", "2024-12-12")
	build("1.27.3", "2026-09-01")

	k := testenv.NewCluster(t, kc)
	ns := k.Namespace(t, "pin-e2e")
	ctx := context.Background()
	// Scaled to zero: its template names 1.27.3; no pod runs it.
	zero := int32(0)
	labels := map[string]string{"app": "idle"}
	if _, err := k.CS.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "idle"},
		Spec: appsv1.DeploymentSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "idle", Image: repo + ":1.27.3"}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A replica on the pin, and a debug container added to it.
	rs := k.Deployment(t, ns, "forgejo", "forgejo-59f7c")
	k.RunningPod(t, ns, "forgejo-59f7c-aaaaa", rs, repo+":1.22.6", repo+"@"+oldDigest)
	p, err := k.CS.CoreV1().Pods(ns).Get(ctx, "forgejo-59f7c-aaaaa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	busybox := "sha256:" + strings.Repeat("b", 64)
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger-x1",
		Image: "registry.example.org/tools/busybox:1", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}}}
	if p, err = k.CS.CoreV1().Pods(ns).UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debugger-x1", Image: "registry.example.org/tools/busybox:1",
		ImageID: "registry.example.org/tools/busybox@" + busybox, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	if _, err := k.CS.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	cat := fmt.Sprintf(`host "prod" {
  kubernetes = { kubeconfig = %q, namespace = %q }
}

module "forge" {
  image  = %q
  policy = "exact"
  pin    = "1.22.6@%s"
  runs_on "prod" { workload = "deployment/forgejo" }
}

module "idle" {
  image  = %q
  policy = "exact"
  pin    = "1.22.6@%s"
  runs_on "prod" { workload = "deployment/idle" }
}
`, kc, ns, repo, oldDigest, repo, oldDigest)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	r := pin(t, dir, "resolve", "--cache-dir="+filepath.Join(dir, "cache"))
	if r.code != 0 {
		t.Fatalf("resolve: exit %d, want the pins kept\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"prod/deployment/idle/idle 1.27.3 (scaled to zero: nothing runs it, not a floor)",
		"prod/deployment/forgejo/debugger-x1 1 × 1@" + image.Short(busybox) + " (ephemeral debug container: not a floor)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, r.stdout)
		}
	}
	locked, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if bytes.Contains(locked, []byte("debugger")) || bytes.Contains(locked, []byte("deployment/idle")) {
		t.Errorf("the lock records what is not a floor:\n%s", locked)
	}
}
