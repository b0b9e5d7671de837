package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/pin-tool/pin/internal/host"
)

const examples = "../../../examples/kubernetes/"

// TestLeastPrivilege: examples/kubernetes/rbac.yaml applied to a real API
// server (RBAC authorization), and pin run with its ServiceAccount's own
// token. Reading a namespace that holds every kind pin lists succeeds, each
// request pin makes is one the Role grants and each rule of the Role is
// used; the token can do nothing else (listing secrets is refused, so the
// server does enforce RBAC); and a Role without one of its rules fails
// Observe with an error naming the verb, resource and group to grant.
// cronjob.yaml is accepted by the API server as written.
func TestLeastPrivilege(t *testing.T) {
	t.Parallel()
	k := newCluster(t)
	ns := k.namespace(t)
	k.apply(t, ns, examples+"rbac.yaml", examples+"cronjob.yaml")
	k.fullNamespace(t, ns)
	kc := k.kubeconfigFor(t, k.token(t, ns, "pin"))

	var mu sync.Mutex
	var requests []string
	h := Host{Name: "prod", Kubeconfig: kc, Namespace: ns, wrap: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			requests = append(requests, r.Method+" "+r.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	}}
	// The API server's RBAC authorizer learns of the new binding through
	// a watch: retry until it has.
	snap := eventually(t, func() (*host.Snapshot, error) {
		mu.Lock()
		requests = nil
		mu.Unlock()
		return h.Observe(context.Background())
	}, func(err error) bool { return err == nil })
	if len(snap.Containers) != 4 {
		t.Errorf("containers: %+v, want the deployment's, the cron job's, and the idle deployment's two", snap.Containers)
	}

	role := k.role(t, ns, "pin-reader")
	granted := map[string]bool{}
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if !slices.Equal(r.Verbs, []string{"list"}) {
					t.Errorf("rule %+v grants more than list", r)
				}
				granted[g+"/"+res] = true
			}
		}
	}
	used := map[string]bool{}
	for _, req := range requests {
		gr, ok := resourceOf(req, ns)
		if !ok {
			t.Errorf("request %s is not a list in namespace %s", req, ns)
			continue
		}
		used[gr] = true
	}
	if !maps.Equal(granted, used) {
		t.Errorf("the Role grants %v, pin used %v: they must be the same", keys(granted), keys(used))
	}

	// Nothing beyond the Role: the server enforces RBAC for this token.
	cs := clientFor(t, kc)
	if _, err := cs.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("listing secrets with pin's token: err = %v, want forbidden (is the API server's authorization RBAC?)", err)
	}

	// Each rule is needed: without it, Observe names what to grant.
	for _, drop := range []struct{ group, resource string }{{"", "pods"}, {"apps", "replicasets"}, {"apps", "deployments"}, {"apps", "statefulsets"}, {"batch", "jobs"}} {
		t.Run("without "+drop.resource, func(t *testing.T) {
			k.setRole(t, ns, without(role, drop.group, drop.resource))
			defer k.setRole(t, ns, role)
			group := drop.group
			if group == "" {
				group = `"" (core)`
			}
			want := fmt.Sprintf("pin's Role must allow verb list on resource %s in API group %s", drop.resource, group)
			eventually(t, func() (*host.Snapshot, error) { return h.Observe(context.Background()) },
				func(err error) bool { return err != nil && strings.Contains(err.Error(), want) })
		})
	}
}

// TestInCluster: pin in a pod. The test binary runs itself again in a
// mount namespace of its own (unshare, as root) where the service
// account's token, CA and namespace files are at the fixed paths client-go
// reads (/var/run/secrets/kubernetes.io/serviceaccount, on a private
// tmpfs: nothing outside the child sees them), with
// KUBERNETES_SERVICE_HOST/PORT set, no KUBECONFIG and no ~/.kube/config.
// There, a Host that names neither kubeconfig nor namespace reads the
// namespace it runs in with the service account's token and Role.
func TestInCluster(t *testing.T) {
	k := newCluster(t)
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("in-cluster test needs root (a mount namespace); CI is set")
		}
		t.Skip("in-cluster test needs root (a mount namespace): run ./scripts/test as root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("in-cluster test needs unshare (util-linux): %v", err)
	}
	ns := k.namespace(t)
	k.apply(t, ns, examples+"rbac.yaml")
	k.fullNamespace(t, ns)

	cfg, err := clientcmd.LoadFromFile(k.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cl := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	u, err := url.Parse(cl.Server)
	if err != nil {
		t.Fatal(err)
	}
	sa := t.TempDir()
	ca, err := os.ReadFile(cl.CertificateAuthority)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"token": []byte(k.token(t, ns, "pin")), "ca.crt": ca, "namespace": []byte(ns)} {
		if err := os.WriteFile(filepath.Join(sa, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const dir = "/var/run/secrets/kubernetes.io/serviceaccount"
	script := `mount -t tmpfs pin-test /run && mkdir -p ` + dir + ` && cp "$SA"/* ` + dir + `/ && exec "$@"`
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "HOME=") && !strings.HasPrefix(e, "KUBERNETES_") && !strings.HasPrefix(e, "POD_NAMESPACE=") {
			env = append(env, e)
		}
	}
	env = append(env, "SA="+sa, "HOME="+t.TempDir(), "KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port(), "PIN_TEST_IN_CLUSTER_CHILD=1")

	// RBAC learns of the binding through a watch: retry until it has.
	snap := eventually(t, func() (*host.Snapshot, error) {
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
			os.Args[0], "-test.run", "^TestInClusterChild$", "-test.count", "1")
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("child: %v\n%s%s", err, out.String(), errb.String())
		}
		_, js, ok := strings.Cut(out.String(), "SNAPSHOT ")
		if !ok {
			return nil, fmt.Errorf("child printed no snapshot:\n%s%s", out.String(), errb.String())
		}
		js, _, _ = strings.Cut(js, "\n")
		var s host.Snapshot
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			return nil, fmt.Errorf("child's snapshot: %v", err)
		}
		return &s, nil
	}, func(err error) bool { return err == nil })
	var workloads []string
	for _, c := range snap.Containers {
		workloads = append(workloads, c.Workload)
	}
	slices.Sort(workloads)
	if want := []string{"cronjob/nightly", "deployment/forgejo", "deployment/idle", "deployment/idle"}; !slices.Equal(workloads, want) {
		t.Errorf("in-cluster read workloads %v, want %v (the namespace of the service account)", workloads, want)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s exists outside the child's mount namespace", dir)
	}
}

// TestInClusterChild is TestInCluster's child: it runs only there.
func TestInClusterChild(t *testing.T) {
	if os.Getenv("PIN_TEST_IN_CLUSTER_CHILD") == "" {
		t.Skip("run by TestInCluster")
	}
	snap, err := Host{Name: "prod"}.Observe(context.Background())
	if err != nil {
		t.Fatalf("in-cluster Observe: %v", err)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("SNAPSHOT %s\n", b)
}

// fullNamespace fills ns with one of each kind pin lists: a Deployment's
// pod (through its ReplicaSet), a CronJob's pod (through its Job), and a
// Deployment scaled to zero (with an init container).
func (k *cluster) fullNamespace(t *testing.T, ns string) {
	t.Helper()
	rs := k.deployment(t, ns, "forgejo", "forgejo-5d4f8", map[string]string{"app": "forgejo"})
	k.pod(t, ns, "forgejo-5d4f8-aaaaa", owner("ReplicaSet", rs), nil, status("forgejo", repo+":1.27.3", repo+"@"+digestA, running()))
	job := k.cronJob(t, ns, "nightly", "nightly-29400000")
	k.pod(t, ns, "nightly-29400000-q", batchOwner("Job", job), nil, status("app", repo+":1.27.3", repo+"@"+digestA, terminated("Completed")))
	k.scaled(t, ns, "Deployment", "idle", 0, corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "idle"}},
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "wait", Image: "registry.example.org/tools/wait:2"}},
			Containers: []corev1.Container{{Name: "app", Image: repo + ":1.27.3"}}}})
}

// apply creates in ns the objects of YAML files, as kubectl apply -n ns -f
// would (the kinds the examples hold).
func (k *cluster) apply(t *testing.T, ns string, files ...string) {
	t.Helper()
	ctx := context.Background()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(b), "\n---\n") {
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
			switch o := obj.(type) {
			case *corev1.ServiceAccount:
				_, err = k.cs.CoreV1().ServiceAccounts(ns).Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.Role:
				_, err = k.cs.RbacV1().Roles(ns).Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.RoleBinding:
				_, err = k.cs.RbacV1().RoleBindings(ns).Create(ctx, o, metav1.CreateOptions{})
			case *batchv1.CronJob:
				_, err = k.cs.BatchV1().CronJobs(ns).Create(ctx, o, metav1.CreateOptions{})
			default:
				t.Fatalf("%s, document %d: apply does not know %T", f, i+1, obj)
			}
			if err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
		}
	}
}

// token asks the API server for a token of service account sa, as the
// kubelet does for a pod.
func (k *cluster) token(t *testing.T, ns, sa string) string {
	t.Helper()
	secs := int64(600)
	tr, err := k.cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of service account %s: %v", sa, err)
	}
	return tr.Status.Token
}

// kubeconfigFor writes a kubeconfig for the test cluster whose user is
// token, and returns its path.
func (k *cluster) kubeconfigFor(t *testing.T, token string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(k.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		*u = clientcmdapi.AuthInfo{Token: token}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func (k *cluster) role(t *testing.T, ns, name string) *rbacv1.Role {
	t.Helper()
	r, err := k.cs.RbacV1().Roles(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (k *cluster) setRole(t *testing.T, ns string, r *rbacv1.Role) {
	t.Helper()
	cur := k.role(t, ns, r.Name)
	cur.Rules = r.Rules
	if _, err := k.cs.RbacV1().Roles(ns).Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// without is role with resource of group taken out of its rules.
func without(role *rbacv1.Role, group, resource string) *rbacv1.Role {
	out := role.DeepCopy()
	out.Rules = nil
	for _, r := range role.Rules {
		r = *r.DeepCopy()
		if slices.Contains(r.APIGroups, group) {
			r.Resources = slices.DeleteFunc(r.Resources, func(s string) bool { return s == resource })
		}
		if len(r.Resources) > 0 {
			out.Rules = append(out.Rules, r)
		}
	}
	return out
}

// resourceOf reads "GET /api/v1/namespaces/NS/pods" or "GET
// /apis/GROUP/VERSION/namespaces/NS/RESOURCE" as "GROUP/RESOURCE"; any
// other request is not one pin should make.
func resourceOf(req, ns string) (string, bool) {
	path, ok := strings.CutPrefix(req, "GET ")
	if !ok {
		return "", false
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) == 5 && parts[0] == "api" && parts[2] == "namespaces" && parts[3] == ns:
		return "/" + parts[4], true
	case len(parts) == 6 && parts[0] == "apis" && parts[3] == "namespaces" && parts[4] == ns:
		return parts[1] + "/" + parts[5], true
	}
	return "", false
}

// eventually calls f until done(err) holds, for up to 20 seconds, and
// returns its last snapshot; it fails the test with the last error.
func eventually(t *testing.T, f func() (*host.Snapshot, error), done func(error) bool) *host.Snapshot {
	t.Helper()
	var s *host.Snapshot
	var err error
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s, err = f()
		if done(err) {
			return s
		}
		if time.Now().After(end) {
			t.Fatalf("after 20s: err = %v", err)
		}
	}
}

// clientFor is a client of the kubeconfig at path.
func clientFor(t *testing.T, path string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
