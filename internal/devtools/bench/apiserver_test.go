package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pin-tool/pin/internal/admit"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// BenchmarkAdmitWarmAPIServer is BenchmarkAdmitWarm with the namespace
// read from the real kube-apiserver of scripts/test (three replicas of
// deployment/forgejo, and their ReplicaSet): one pod list and one
// ReplicaSet list per decision. Run it through scripts/test:
//
//	./scripts/test -run XXX -bench AdmitWarmAPIServer -benchtime 200x ./internal/devtools/bench
func BenchmarkAdmitWarmAPIServer(b *testing.B) {
	kc := testenv.Kubernetes(b)
	f := newFixture(b)
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		b.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns := fmt.Sprintf("pin-bench-%d", time.Now().UnixNano()%1e9)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	yes := true
	labels := map[string]string{"app": "forgejo"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "forgejo", Image: f.repo + ":1.27.3"}}}}
	d, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "forgejo"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	rs, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "forgejo-6d9f",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes}}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	running := f.digest(b, "1.27.3")
	for i := range 3 {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("forgejo-6d9f-%d", i), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}},
			Spec: tmpl.Spec}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "forgejo", Image: f.repo + ":1.27.3", ImageID: f.repo + "@" + running,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	cat := fmt.Sprintf(`host "prod" {
  kubernetes = { kubeconfig = %q, namespace = %q }
}

module "forge" {
  image  = %q
  policy = "at-least-running"
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
}
`, kc, ns, f.repo)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		b.Fatal(err)
	}
	e, _, err := enforce.Load(filepath.Join(dir, "catalogue.hcl"), filepath.Join(dir, "pin.lock.hcl"),
		source.Options{CacheDir: filepath.Join(dir, "cache"), Concurrency: 8, Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	s := &admit.Server{Enforcer: e, Namespaces: map[string]string{"apps": "prod"}}
	body := f.review()
	if out := serveAdmit(s, body); !strings.Contains(out, `"allowed":true`) {
		b.Fatalf("not allowed: %s", out)
	}
	// An image the registry does not hold is refused: the replicas were
	// read (what they run is named).
	if out := serveAdmit(s, f.reviewTo("0.1.0")); !strings.Contains(out, `"allowed":false`) || !strings.Contains(out, "prod/deployment/forgejo/forgejo runs") {
		b.Fatalf("0.1.0 over 1.27.3: %s", out)
	}
	measure(b, func(int) string { return serveAdmit(s, body) })
}
