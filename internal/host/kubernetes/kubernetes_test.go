package kubernetes

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// Digests of images the fake kubelet reports; no registry is involved.
var (
	digestA = "sha256:" + strings.Repeat("a", 64)
	digestB = "sha256:" + strings.Repeat("b", 64)
	digestC = "sha256:" + strings.Repeat("c", 64)
)

const repo = "registry.example.org/forge/forgejo"

// TestObserve reads a namespace holding what a cluster runs mid-rollout: a
// Deployment whose two replicas run different digests, a StatefulSet pod
// whose container has terminated, a DaemonSet pod, a pod nothing owns with
// an image still being pulled, and a pod of a ReplicaSet no Deployment owns.
// A pod in another namespace is not read.
func TestObserve(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	rs := k.deployment(t, ns, "forgejo", "forgejo-5d4f8", map[string]string{"app": "forgejo"})
	k.pod(t, ns, "forgejo-5d4f8-aaaaa", owner("ReplicaSet", rs), map[string]string{"app": "forgejo"},
		status("forgejo", repo+":1.27.3", repo+"@"+digestA, running()))
	// Older runtimes (dockershim) prefix the digest.
	k.pod(t, ns, "forgejo-5d4f8-bbbbb", owner("ReplicaSet", rs), map[string]string{"app": "forgejo"},
		status("forgejo", repo+":1.27.2", "docker-pullable://"+repo+"@"+digestB, running()))
	sts := k.object(t, ns, "StatefulSet", "db")
	k.pod(t, ns, "db-0", owner("StatefulSet", sts), nil,
		status("postgres", "registry.example.org/db/postgres:16", "registry.example.org/db/postgres@"+digestC, terminated("Error")))
	ds := k.object(t, ns, "DaemonSet", "agent")
	k.pod(t, ns, "agent-x7k2p", owner("DaemonSet", ds), nil,
		status("agent", repo+"@"+digestA, repo+"@"+digestA, running()))
	orphan := k.replicaSet(t, ns, "batch-7f9c", nil)
	k.pod(t, ns, "batch-7f9c-zzzzz", owner("ReplicaSet", orphan), nil,
		status("batch", repo+":1.27.3", repo+"@"+digestA, running()))
	k.pod(t, ns, "debug", nil, map[string]string{"pin.module": "forge"},
		status("shell", repo+":1.27.3", repo+"@"+digestA, running()),
		status("pulling", "registry.example.org/tools/busybox:1", "", waiting("ImagePullBackOff")))
	other := k.namespace(t)
	k.pod(t, other, "elsewhere", nil, nil, status("forgejo", repo+":1.0.0", repo+"@"+digestC, running()))

	snap, err := Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	fl := map[string]string{"app": "forgejo"}
	want := &host.Snapshot{Schema: host.SnapshotSchema, Host: "prod",
		Containers: []host.Container{
			{ID: "agent-x7k2p/agent", Name: "agent", Image: repo + "@" + digestA, ImageID: digestA, State: "running", Workload: "daemonset/agent", Pod: "agent-x7k2p"},
			{ID: "batch-7f9c-zzzzz/batch", Name: "batch", Image: repo + ":1.27.3", ImageID: digestA, State: "running", Workload: "replicaset/batch-7f9c", Pod: "batch-7f9c-zzzzz"},
			{ID: "forgejo-5d4f8-aaaaa/forgejo", Name: "forgejo", Image: repo + ":1.27.3", ImageID: digestA, State: "running", Labels: fl, Workload: "deployment/forgejo", Pod: "forgejo-5d4f8-aaaaa"},
			{ID: "forgejo-5d4f8-bbbbb/forgejo", Name: "forgejo", Image: repo + ":1.27.2", ImageID: digestB, State: "running", Labels: fl, Workload: "deployment/forgejo", Pod: "forgejo-5d4f8-bbbbb"},
			{ID: "db-0/postgres", Name: "postgres", Image: "registry.example.org/db/postgres:16", ImageID: digestC, State: "terminated: Error", Workload: "statefulset/db", Pod: "db-0"},
			{ID: "debug/shell", Name: "shell", Image: repo + ":1.27.3", ImageID: digestA, State: "running", Labels: map[string]string{"pin.module": "forge"}, Workload: "pod/debug", Pod: "debug"},
		},
		Images: []host.Image{
			{ID: digestA, RepoDigests: []string{repo + "@" + digestA}},
			{ID: digestB, RepoDigests: []string{repo + "@" + digestB}},
			{ID: digestC, RepoDigests: []string{"registry.example.org/db/postgres@" + digestC}},
		},
	}
	if d := cmp.Diff(want, snap); d != "" {
		t.Errorf("snapshot (-want +got):\n%s", d)
	}
	// What pin lock --snapshot writes reads back the same.
	b, err := snap.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := host.ParseSnapshot(b, "prod")
	if err != nil {
		t.Fatalf("reading the snapshot back: %v\n%s", err, b)
	}
	if d := cmp.Diff(snap, again); d != "" {
		t.Errorf("snapshot round trip (-observed +read):\n%s", d)
	}
}

// TestObserveSelector: the host's label selector scopes the pod list.
func TestObserveSelector(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	k.pod(t, ns, "web-1", nil, map[string]string{"team": "web"}, status("web", repo+":1", repo+"@"+digestA, running()))
	k.pod(t, ns, "db-1", nil, map[string]string{"team": "db"}, status("db", repo+":1", repo+"@"+digestB, running()))
	snap, err := Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns, Selector: "team=web"}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if len(snap.Containers) != 1 || snap.Containers[0].Pod != "web-1" || len(snap.Images) != 1 {
		t.Errorf("selector team=web: containers %+v, images %+v", snap.Containers, snap.Images)
	}
}

// TestReusing: a host made with Reusing reads its kubeconfig and sets up
// its client once (pin admit reads its hosts on every request): with the
// kubeconfig gone after the first read, it still reads; one made without
// it does not.
func TestReusing(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	k.pod(t, ns, "web-1", nil, nil, status("web", repo+":1", repo+"@"+digestA, running()))
	src, err := os.ReadFile(k.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	kept := Reusing(Host{Name: "prod", Kubeconfig: path, Namespace: ns})
	fresh := Host{Name: "prod", Kubeconfig: path, Namespace: ns}
	for _, h := range []Host{kept, fresh} {
		if _, err := h.Observe(context.Background()); err != nil {
			t.Fatalf("first read: %v", err)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	copied := kept
	if snap, err := copied.Observe(context.Background()); err != nil || len(snap.Containers) != 1 {
		t.Errorf("a reusing host, its kubeconfig gone: %v %v", snap, err)
	}
	if _, err := fresh.Observe(context.Background()); err == nil {
		t.Error("a host without Reusing read without its kubeconfig: the test proves nothing")
	}
}

// TestObserveStates: the state word of each kubelet report.
func TestObserveStates(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	k.pod(t, ns, "crashing", nil, nil, status("app", repo+":1", repo+"@"+digestA, waiting("CrashLoopBackOff")))
	k.pod(t, ns, "done", nil, nil, status("app", repo+":1", repo+"@"+digestA, terminated("Completed")))
	k.podPhase(t, ns, "starting", corev1.PodPending, status("app", repo+":1", repo+"@"+digestA, running()))
	k.pod(t, ns, "fine", nil, nil, status("app", repo+":1", repo+"@"+digestA, running()))
	snap, err := Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	got := map[string]string{}
	for _, c := range snap.Containers {
		got[c.Pod] = c.State
	}
	want := map[string]string{"crashing": "waiting: CrashLoopBackOff", "done": "terminated: Completed", "starting": "running: pod Pending", "fine": "running"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("states (-want +got):\n%s", d)
	}
}

// TestObserveRequests: 2,000 pods across 50 workloads (45 Deployments and
// 5 CronJobs, each through its Job) are read in ceil(2000/PageSize) pod
// lists, one ReplicaSet list, one Job list, and one list each of
// Deployments and StatefulSets: nothing else, whatever the namespace holds.
// The 2,000 pods are 50 observations: one per workload container and image.
func TestObserveRequests(t *testing.T) {
	t.Parallel()
	const pods, deployments, cronJobs = 2000, 45, 5
	k := newCluster(t)
	ns := k.namespace(t)
	var owners [][]metav1.OwnerReference
	for i := range deployments {
		rs := k.deployment(t, ns, fmt.Sprintf("web-%02d", i), fmt.Sprintf("web-%02d-6b7c9", i), map[string]string{"app": fmt.Sprintf("web-%02d", i)})
		owners = append(owners, owner("ReplicaSet", rs))
	}
	for i := range cronJobs {
		job := k.cronJob(t, ns, fmt.Sprintf("nightly-%d", i), fmt.Sprintf("nightly-%d-29400000", i))
		owners = append(owners, batchOwner("Job", job))
	}
	start := time.Now()
	k.manyPods(t, ns, pods, func(i int) (string, []metav1.OwnerReference) {
		return fmt.Sprintf("p-%05d", i), owners[i%len(owners)]
	})
	t.Logf("created and reported %d pods in %s", pods, time.Since(start).Round(time.Millisecond))

	var mu sync.Mutex
	var requests []string
	types := map[string]int{}
	h := Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns, wrap: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			requests = append(requests, r.Method+" "+r.URL.Path+" limit="+r.URL.Query().Get("limit"))
			mu.Unlock()
			resp, err := rt.RoundTrip(r)
			if err == nil {
				mu.Lock()
				types[resp.Header.Get("Content-Type")]++
				mu.Unlock()
			}
			return resp, err
		})
	}}
	start = time.Now()
	snap, err := h.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	t.Logf("observed %d containers in %s with %d requests", len(snap.Containers), time.Since(start).Round(time.Millisecond), len(requests))
	if len(snap.Containers) != pods {
		t.Errorf("containers = %d, want %d", len(snap.Containers), pods)
	}
	podList := "GET /api/v1/namespaces/" + ns + "/pods limit=500"
	want := []string{podList, podList, podList, podList,
		"GET /apis/apps/v1/namespaces/" + ns + "/replicasets limit=500",
		"GET /apis/batch/v1/namespaces/" + ns + "/jobs limit=500",
		"GET /apis/apps/v1/namespaces/" + ns + "/deployments limit=500",
		"GET /apis/apps/v1/namespaces/" + ns + "/statefulsets limit=500"}
	if d := cmp.Diff(want, requests); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	// Every list came back in protobuf, several times smaller and faster
	// to decode than JSON for thousands of pods.
	if d := cmp.Diff(map[string]int{"application/vnd.kubernetes.protobuf": len(want)}, types); d != "" {
		t.Errorf("content types of the answers (-want +got):\n%s", d)
	}

	// Every pod carries pin.module=fleet: one observation per workload.
	m := &catalogue.Module{Name: "fleet", Image: repo}
	obs, _ := observe.Observations(m, observe.Observed{Snapshots: map[string]*host.Snapshot{"prod": snap}})
	replicas := map[string]int{}
	for _, o := range obs {
		replicas[o.Container] += o.Replicas
	}
	if len(obs) != deployments+cronJobs || len(replicas) != deployments+cronJobs {
		t.Errorf("%d observations of %d workload containers, want %d", len(obs), len(replicas), deployments+cronJobs)
	}
	if replicas["deployment/web-00/app"] != pods/(deployments+cronJobs) || replicas["cronjob/nightly-4/app"] != pods/(deployments+cronJobs) {
		t.Errorf("replicas: %v", replicas)
	}
}

// TestObserveListsOnlyWhatPodsNeed: with no pod owned by a ReplicaSet or a
// Job, neither is listed: one pod list, and the Deployment and StatefulSet
// lists that find workloads scaled to zero.
func TestObserveListsOnlyWhatPodsNeed(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	k.pod(t, ns, "solo", nil, nil, status("app", repo+":1", repo+"@"+digestA, running()))
	var mu sync.Mutex
	var requests []string
	h := Host{Name: "prod", Kubeconfig: k.kubeconfig, Namespace: ns, wrap: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			requests = append(requests, r.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	}}
	if _, err := h.Observe(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"/api/v1/namespaces/" + ns + "/pods", "/apis/apps/v1/namespaces/" + ns + "/deployments", "/apis/apps/v1/namespaces/" + ns + "/statefulsets"}
	if d := cmp.Diff(want, requests); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

// TestKubeconfig: the context and namespace come from the kubeconfig as
// kubectl takes them: KUBECONFIG, the current context and its namespace,
// unless the host names others.
func TestKubeconfig(t *testing.T) {
	k := newCluster(t)
	ns := k.namespace(t)
	k.pod(t, ns, "here", nil, nil, status("app", repo+":1", repo+"@"+digestA, running()))
	cfg, err := clientcmd.LoadFromFile(k.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// A second context that defaults to ns, and a broken current context.
	good := *cfg.Contexts[cfg.CurrentContext]
	good.Namespace = ns
	cfg.Contexts["apps"] = &good
	cfg.Contexts["broken"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: "nobody"}
	cfg.CurrentContext = "broken"
	path := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)

	snap, err := Host{Name: "prod", Context: "apps"}.Observe(context.Background())
	if err != nil {
		t.Fatalf("context apps from KUBECONFIG: %v", err)
	}
	if len(snap.Containers) != 1 || snap.Containers[0].Pod != "here" {
		t.Errorf("context apps read %+v, want the pod of its namespace %s", snap.Containers, ns)
	}
	_, err = Host{Name: "prod"}.Observe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "host prod") {
		t.Errorf("broken current context: err = %v, want an error naming the host", err)
	}
	_, err = Host{Name: "prod", Kubeconfig: filepath.Join(t.TempDir(), "missing")}.Observe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "host prod (kubeconfig ") {
		t.Errorf("missing kubeconfig: err = %v", err)
	}
}

// TestObserveDown: an API server that does not answer is an error naming
// the host and the server, within the timeout.
func TestObserveDown(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config")
	os.WriteFile(path, []byte(`{"apiVersion":"v1","kind":"Config","current-context":"c",
"clusters":[{"name":"c","cluster":{"server":"https://127.0.0.1:1"}}],
"users":[{"name":"u","user":{"token":"t"}}],
"contexts":[{"name":"c","context":{"cluster":"c","user":"u"}}]}`), 0o600)
	_, err := Host{Name: "prod", Kubeconfig: path, Timeout: 5 * time.Second}.Observe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "host prod (https://127.0.0.1:1, namespace default): listing pods") {
		t.Errorf("err = %v", err)
	}
}

func TestSplitImageID(t *testing.T) {
	for in, want := range map[string][2]string{
		repo + "@" + digestA:                        {repo, digestA},
		"docker-pullable://" + repo + "@" + digestA: {repo, digestA},
		"docker://" + digestA:                       {"", digestA},
		digestA:                                     {"", digestA},
		"":                                          {"", ""},
		"registry.example.org:5000/x@" + digestB:    {"registry.example.org:5000/x", digestB},
		"docker-pullable://" + repo + "@sha256":     {"", ""},
	} {
		r, d := splitImageID(in)
		if r != want[0] || d != want[1] {
			t.Errorf("splitImageID(%q) = %q, %q; want %q, %q", in, r, d, want[0], want[1])
		}
	}
}

// --- a test cluster, and a stand-in for the controllers and the kubelet --------

type cluster struct {
	kubeconfig string
	cs         *kubernetes.Clientset
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	path := testenv.Kubernetes(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	// The tests write thousands of objects: no client-side throttling.
	cfg.QPS, cfg.Burst = 1000, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{kubeconfig: path, cs: cs}
}

var nsSeq atomic.Int64

// namespace creates a namespace of the test's own. Nothing deletes it:
// without a controller manager a namespace never finishes terminating, and
// the whole cluster goes with the test run.
func (k *cluster) namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("pin-%d-%d", time.Now().UnixNano()%1e9, nsSeq.Add(1))
	_, err := k.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// deployment creates a Deployment and, as its controller would, the
// ReplicaSet rsName that it owns; it returns the ReplicaSet.
func (k *cluster) deployment(t *testing.T, ns, name, rsName string, labels map[string]string) metav1.Object {
	t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: template(labels),
		},
	}
	d, err := k.cs.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating deployment %s: %v", name, err)
	}
	return k.replicaSet(t, ns, rsName, owner("Deployment", d))
}

func (k *cluster) replicaSet(t *testing.T, ns, name string, owners []metav1.OwnerReference) metav1.Object {
	t.Helper()
	labels := map[string]string{"rs": name}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template(labels)},
	}
	rs, err := k.cs.AppsV1().ReplicaSets(ns).Create(context.Background(), rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating replica set %s: %v", name, err)
	}
	return rs
}

// object creates a StatefulSet or DaemonSet to own pods.
func (k *cluster) object(t *testing.T, ns, kind, name string) metav1.Object {
	t.Helper()
	labels := map[string]string{"app": name}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	var o metav1.Object
	var err error
	switch kind {
	case "StatefulSet":
		o, err = k.cs.AppsV1().StatefulSets(ns).Create(context.Background(), &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.StatefulSetSpec{Selector: sel, Template: template(labels)}}, metav1.CreateOptions{})
	case "DaemonSet":
		o, err = k.cs.AppsV1().DaemonSets(ns).Create(context.Background(), &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: template(labels)}}, metav1.CreateOptions{})
	default:
		t.Fatalf("object: kind %s", kind)
	}
	if err != nil {
		t.Fatalf("creating %s %s: %v", kind, name, err)
	}
	return o
}

func template(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.org/app:1"}}},
	}
}

// owner is the controller reference to o, of the given kind.
func owner(kind string, o metav1.Object) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: &yes}}
}

// pod creates a pod whose containers are those of statuses, and reports
// them as a kubelet would, with the pod Running.
func (k *cluster) pod(t *testing.T, ns, name string, owners []metav1.OwnerReference, labels map[string]string, statuses ...corev1.ContainerStatus) {
	t.Helper()
	if err := k.createPod(ns, name, owners, labels, corev1.PodRunning, statuses); err != nil {
		t.Fatal(err)
	}
}

func (k *cluster) podPhase(t *testing.T, ns, name string, phase corev1.PodPhase, statuses ...corev1.ContainerStatus) {
	t.Helper()
	if err := k.createPod(ns, name, nil, nil, phase, statuses); err != nil {
		t.Fatal(err)
	}
}

func (k *cluster) createPod(ns, name string, owners []metav1.OwnerReference, labels map[string]string, phase corev1.PodPhase, statuses []corev1.ContainerStatus) error {
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: owners}}
	for _, s := range statuses {
		img := s.Image
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: s.Name, Image: img})
	}
	p, err := k.cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s: %w", name, err)
	}
	p.Status.Phase = phase
	p.Status.ContainerStatuses = statuses
	if _, err := k.cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("reporting the status of pod %s: %w", name, err)
	}
	return nil
}

// manyPods creates n running pods, a few at a time; pod(i) names the
// i-th (from 0) and its owners.
func (k *cluster) manyPods(t *testing.T, ns string, n int, pod func(i int) (string, []metav1.OwnerReference)) {
	t.Helper()
	const workers = 16
	var next atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				name, owners := pod(int(i - 1))
				st := status("app", repo+":1.27.3", repo+"@"+digestA, running())
				if err := k.createPod(ns, name, owners, map[string]string{"pin.module": "fleet"}, corev1.PodRunning, []corev1.ContainerStatus{st}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func status(name, image, imageID string, state corev1.ContainerState) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: image, ImageID: imageID, State: state, Ready: state.Running != nil}
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func terminated(reason string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: 1}}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
